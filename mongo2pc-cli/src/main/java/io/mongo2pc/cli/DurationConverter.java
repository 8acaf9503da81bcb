package io.mongo2pc.cli;

import picocli.CommandLine;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a DURATION such as {@code 500ms}, {@code 30s}, {@code 1.5s}, {@code 5m}, {@code 1h},
 * {@code 2d}, a bare {@code 0}, or ISO-8601 ({@code PT30S}). Negative durations are refused.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /** Parses {@code text}; throws {@link CommandLine.TypeConversionException} naming it when it is not a duration. */
    public static Duration parse(String text) {
        String trimmed = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        if (trimmed.equals("0")) {
            return Duration.ZERO;
        }
        if (trimmed.startsWith("-") || trimmed.startsWith("pt-") || trimmed.startsWith("p-")) {
            throw new CommandLine.TypeConversionException("'" + text + "' is negative: a duration is zero or more");
        }
        Matcher m = SIMPLE.matcher(trimmed);
        if (m.matches()) {
            BigDecimal amount = new BigDecimal(m.group(1));
            BigDecimal nanosPerUnit = switch (m.group(2)) {
                case "ms" -> BigDecimal.valueOf(1_000_000L);
                case "s" -> BigDecimal.valueOf(1_000_000_000L);
                case "m" -> BigDecimal.valueOf(60_000_000_000L);
                case "h" -> BigDecimal.valueOf(3_600_000_000_000L);
                default -> BigDecimal.valueOf(86_400_000_000_000L);
            };
            try {
                return Duration.ofNanos(amount.multiply(nanosPerUnit).longValueExact());
            } catch (ArithmeticException e) {
                throw new CommandLine.TypeConversionException("duration '" + text + "' is too long or too precise");
            }
        }
        if (trimmed.startsWith("pt") || trimmed.startsWith("p")) {
            try {
                Duration d = Duration.parse(trimmed.toUpperCase(Locale.ROOT));
                if (!d.isNegative()) {
                    return d;
                }
            } catch (DateTimeParseException ignored) {
                // fall through to the error below
            }
        }
        throw new CommandLine.TypeConversionException("'" + text
                + "' is not a duration: use a number with a unit, e.g. 500ms, 30s, 5m, 1h");
    }

    /** Formats a duration the way it is written on the command line, e.g. {@code 30s}, {@code 500ms}. */
    public static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.toNanosPart() == 0 && d.toMillis() % 1000 == 0) {
            long s = d.getSeconds();
            if (s % 3600 == 0) {
                return s / 3600 + "h";
            }
            if (s % 60 == 0) {
                return s / 60 + "m";
            }
            return s + "s";
        }
        return d.toMillis() + "ms";
    }
}
