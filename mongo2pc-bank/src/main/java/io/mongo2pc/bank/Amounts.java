package io.mongo2pc.bank;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.math.MathContext;

/**
 * Money amounts: a {@code long} of minor units, or a {@link Decimal128} when the text has a
 * fraction. Never a double. Refuses what is not a finite number, or does not fit.
 * <p>
 * An account's <em>scale</em> is the number of decimal places of its stored balance, read from
 * the balance itself (no field of its own, so the tutorial's documents stay as they are): 0 for an
 * integer, the Decimal128's own exponent for a Decimal128 ({@code 10.00} keeps its two places,
 * and adding an amount of at most as many places keeps them), the places of its shortest decimal
 * text for a double the mongo shell wrote. A transfer's amount may not have more decimal places
 * than the scale of either account. Stateless.
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

    /**
     * The scale of an account whose stored balance is {@code balance}: its number of decimal
     * places (see the class comment); 0 for what is not a finite number.
     */
    public static int scaleOf(Object balance) {
        if (balance instanceof Decimal128 || balance instanceof Double || balance instanceof Float) {
            if (!Numbers.isFinite(balance)) {
                return 0;
            }
            BigDecimal exact = Numbers.exact((Number) balance);
            return Math.max(0, balance instanceof Decimal128 ? exact.scale() : exact.stripTrailingZeros().scale());
        }
        return 0;
    }

    /** How many decimal places the value of {@code amount} needs: 0 for 5 and 5.00, 1 for 1.50. */
    public static int decimalPlaces(Number amount) {
        if (amount instanceof Long || amount instanceof Integer) {
            return 0;
        }
        return Math.max(0, toBigDecimal(amount).stripTrailingZeros().scale());
    }

    /**
     * Refuses {@code amount} when it has more decimal places than the scale of {@code account}
     * (whose stored balance is {@code balance}); a balance that is not a number has none to keep.
     */
    public static void requireScale(Number amount, Object account, Object balance) {
        if (!Numbers.isFinite(balance)) {
            return; // no scale to keep: the transfer's write to this balance is refused, and it cancels
        }
        int places = decimalPlaces(amount);
        int scale = scaleOf(balance);
        if (places > scale) {
            throw new InvalidTransactionException("amount " + toBigDecimal(amount).stripTrailingZeros().toPlainString()
                    + " has " + places(places) + ", but account " + account + " allows " + scale + " (" + (scale == 0
                    ? "its balance " + balance + " is in whole units" : "its balance " + balance + " has " + scale)
                    + "); an account's scale is set when it is created: a balance of 10.00 allows 2");
        }
    }

    /**
     * {@code amount} as it is added to balances: a whole value as a {@code long} (so 5.00 keeps
     * an account of whole units whole), else a Decimal128 of its value's own places (1.50 as 1.5,
     * so it never adds places to a balance).
     */
    public static Number inLeastScale(Number amount) {
        if (amount instanceof Long) {
            return amount;
        }
        BigDecimal value = toBigDecimal(amount).stripTrailingZeros();
        if (value.scale() <= 0) {
            try {
                return value.longValueExact();
            } catch (ArithmeticException tooBig) {
                return amount;
            }
        }
        return amount instanceof Decimal128 d && Numbers.exact(d).scale() == value.scale() ? d : new Decimal128(value);
    }

    /**
     * {@code balance} stored in {@code scale} decimal places: a {@code long} for scale 0, else a
     * Decimal128 with exactly that many; refuses a balance that needs more.
     */
    public static Number inScale(Number balance, int scale, String what) {
        if (scale < 0 || scale > 34) {
            throw new InvalidTransactionException("scale of " + what + " must be from 0 to 34 decimal places, got " + scale);
        }
        int places = decimalPlaces(balance);
        if (places > scale) {
            throw new InvalidTransactionException("balance " + toBigDecimal(balance).stripTrailingZeros().toPlainString()
                    + " has " + places(places) + ", more than the " + scale + " of " + what);
        }
        BigDecimal value = toBigDecimal(balance);
        if (scale == 0) {
            try {
                return value.longValueExact();
            } catch (ArithmeticException e) {
                throw new InvalidTransactionException("balance of " + what + " does not fit in a 64-bit integer, got "
                        + value.toPlainString());
            }
        }
        try {
            return new Decimal128(value.setScale(scale));
        } catch (NumberFormatException e) {
            throw new InvalidTransactionException("balance " + value.toPlainString() + " in " + scale
                    + " decimal places has more than 34 digits (Decimal128)");
        }
    }

    private static String places(int n) {
        return n + (n == 1 ? " decimal place" : " decimal places");
    }

    /** The exact value of a stored amount ({@link Numbers#exact}); NaN or an infinity is refused as bad input. */
    static BigDecimal toBigDecimal(Number number) {
        if (!Numbers.isFinite(number)) {
            throw new InvalidTransactionException("amount must be finite, got " + number);
        }
        return Numbers.exact(number);
    }
}
