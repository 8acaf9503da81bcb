package io.mongo2pc.cli;

import org.bson.types.Decimal128;

import java.math.BigDecimal;

/** Balances as exact decimals, whatever numeric type they are stored in. */
final class Money {
    private Money() { }

    static BigDecimal of(Object number) {
        if (number == null) {
            return BigDecimal.ZERO;
        }
        if (number instanceof Decimal128 d) {
            return new BigDecimal(d.toString()); // bigDecimalValue() throws on a negative zero
        }
        if (number instanceof BigDecimal b) {
            return b;
        }
        if (number instanceof Double || number instanceof Float) {
            return BigDecimal.valueOf(((Number) number).doubleValue());
        }
        return BigDecimal.valueOf(((Number) number).longValue());
    }
}
