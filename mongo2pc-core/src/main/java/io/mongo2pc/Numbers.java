package io.mongo2pc;

import org.bson.types.Decimal128;

import java.math.BigDecimal;

/**
 * Numbers as MongoDB stores them ({@code Integer}, {@code Long}, {@code Double},
 * {@link Decimal128}), read exactly, and handed to programs in one type per scale: whole numbers as
 * {@code Long} (never an {@code Integer} one time and a {@code Long} the next: a document written
 * by the mongo shell holds int32s, which an increment turns into int64s), Decimal128 as
 * {@link BigDecimal}. Stateless and thread-safe.
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

    /**
     * The decimal a person reads for {@code number}: {@link #exact}, but a double written in Java's
     * exponent form ({@code 1.0E-7}) without the trailing zero that form adds ({@code 0.0000001}).
     * Show it with {@link BigDecimal#toPlainString()}, never in exponent form. Finite numbers only.
     */
    public static BigDecimal shown(Number number) {
        BigDecimal exact = exact(number);
        if ((number instanceof Double || number instanceof Float) && Double.toString(number.doubleValue()).contains("E")) {
            exact = exact.stripTrailingZeros();
            return exact.scale() < 0 ? exact.setScale(0) : exact;
        }
        return exact;
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

    /**
     * {@code value} in the one type of its scale: {@code Integer}, {@code Short}, {@code Byte} and
     * {@code Long} as {@code Long}; a finite Decimal128 as {@link BigDecimal} (exactly, a negative
     * zero too); anything else (a double, NaN, text) as it is.
     */
    public static Object normalized(Object value) {
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Decimal128 d && isFinite(d)) {
            return exact(d);
        }
        return value;
    }

    /** The opposite amount, of the same numeric type. */
    public static Number negate(Number amount) {
        if (amount instanceof Integer i) {
            return -i;
        }
        if (amount instanceof Long l) {
            return -l;
        }
        if (amount instanceof Double d) {
            return -d;
        }
        if (amount instanceof Decimal128 d) {
            return new Decimal128(exact(d).negate());
        }
        if (amount instanceof BigDecimal b) {
            return b.negate();
        }
        throw new IllegalArgumentException("not an amount: " + Values.describe(amount));
    }
}
