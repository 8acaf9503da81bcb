package io.mongo2pc;

import org.bson.types.Decimal128;

import java.math.BigDecimal;

/**
 * Numbers as MongoDB stores them ({@code Integer}, {@code Long}, {@code Double},
 * {@link Decimal128}), read exactly. Stateless and thread-safe.
 */
public final class Numbers {
    private Numbers() { }

    /**
     * The exact decimal value of a stored number: integers and Decimal128 exactly (a Decimal128
     * negative zero too, which {@link Decimal128#bigDecimalValue()} refuses), a double as its
     * shortest decimal text. Throws {@link ArithmeticException} for NaN or an infinity, which have
     * no decimal value.
     */
    public static BigDecimal exact(Number number) {
        if (number instanceof BigDecimal b) {
            return b;
        }
        if (number instanceof Decimal128 d) {
            if (d.isNaN() || d.isInfinite()) {
                throw new ArithmeticException(d + " has no decimal value");
            }
            return new BigDecimal(d.toString()); // via the text: bigDecimalValue() throws on a negative zero
        }
        if (number instanceof Double || number instanceof Float) {
            double d = number.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new ArithmeticException(d + " has no decimal value");
            }
            return BigDecimal.valueOf(d);
        }
        return BigDecimal.valueOf(number.longValue());
    }

    /** True for a number with a decimal value: not NaN, not an infinity. */
    public static boolean isFinite(Object number) {
        if (number instanceof Decimal128 d) {
            return !d.isNaN() && !d.isInfinite();
        }
        if (number instanceof Double || number instanceof Float) {
            double d = ((Number) number).doubleValue();
            return !Double.isNaN(d) && !Double.isInfinite(d);
        }
        return number instanceof Number;
    }
}
