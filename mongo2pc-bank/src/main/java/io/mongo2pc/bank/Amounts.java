package io.mongo2pc.bank;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.math.MathContext;

/**
 * Money amounts: a {@code long} of minor units, or a {@link Decimal128} when the text has a
 * fraction. Never a double. Refuses what is not a finite number, or does not fit.
 */
public final class Amounts {
    private Amounts() { }

    /** Parses "100" as 100L and "12.50" as Decimal128 12.50. */
    public static Number parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidTransactionException("amount is missing");
        }
        String trimmed = text.trim();
        if (!trimmed.matches("[+-]?\\d+(\\.\\d+)?")) {
            throw new InvalidTransactionException("amount '" + text + "' is not a number (use digits, optionally with a '.' fraction)");
        }
        BigDecimal value = new BigDecimal(trimmed);
        if (value.scale() <= 0) {
            try {
                return value.longValueExact();
            } catch (ArithmeticException e) {
                throw new InvalidTransactionException("amount '" + text + "' does not fit in a 64-bit integer (max "
                        + Long.MAX_VALUE + ")");
            }
        }
        if (value.precision() > 34) {
            throw new InvalidTransactionException("amount '" + text + "' has more than 34 significant digits (Decimal128)");
        }
        try {
            return new Decimal128(value.round(MathContext.DECIMAL128));
        } catch (NumberFormatException | ArithmeticException e) {
            // e.g. thousands of fraction digits: beyond Decimal128's exponent range
            throw new InvalidTransactionException("amount '" + abbreviated(text) + "' is out of Decimal128's range: " + e.getMessage());
        }
    }

    private static String abbreviated(String text) {
        return text.length() <= 40 ? text : text.substring(0, 20) + "..." + text.substring(text.length() - 10)
                + " (" + text.length() + " characters)";
    }

    /** Checks that {@code amount} is a long or Decimal128 greater than zero. */
    public static Number requirePositive(Object amount, String what) {
        if (amount instanceof Integer i) {
            amount = i.longValue();
        }
        if (amount instanceof Long l) {
            if (l <= 0) {
                throw new InvalidTransactionException(what + " must be greater than zero, got " + l);
            }
            return l;
        }
        if (amount instanceof Decimal128 d) {
            if (!Numbers.isFinite(d) || Numbers.exact(d).signum() <= 0) {
                throw new InvalidTransactionException(what + " must be a finite amount greater than zero, got " + d);
            }
            return d;
        }
        throw new InvalidTransactionException(what + " must be an integer (long minor units) or a Decimal128, got "
                + (amount == null ? "null" : amount + " (" + amount.getClass().getSimpleName() + ")"));
    }

    /** The exact value of a stored amount ({@link Numbers#exact}); NaN or an infinity is refused as bad input. */
    static BigDecimal toBigDecimal(Number number) {
        if (!Numbers.isFinite(number)) {
            throw new InvalidTransactionException("amount must be finite, got " + number);
        }
        return Numbers.exact(number);
    }
}
