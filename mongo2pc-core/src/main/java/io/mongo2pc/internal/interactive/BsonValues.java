package io.mongo2pc.internal.interactive;

import io.mongo2pc.Numbers;
import org.bson.BsonTimestamp;
import io.mongo2pc.internal.format.Copies;
import org.bson.Document;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Values of documents as MongoDB compares and copies them: equality and order across types (numbers
 * by value whatever their type, then strings, documents, arrays, binaries, ObjectIds, booleans,
 * dates, timestamps), deep copies, and numbers in the one type of their scale. Stateless.
 */
final class BsonValues {
    private BsonValues() { }

    /** A copy of {@code value} at any depth (documents and lists), each other value passed through {@code leaf}. */
    static Object copy(Object value, UnaryOperator<Object> leaf) {
        return Copies.copy(value, leaf);
    }

    static Document copy(Document doc) {
        return (Document) copy(doc, UnaryOperator.identity());
    }

    /** {@code doc} with every number in the one type of its scale (as readCommitted returns them); the id as stored. */
    static Document normalized(Document doc) {
        Document normalized = (Document) copy(doc, Numbers::normalized);
        if (doc.containsKey("_id")) {
            normalized.put("_id", doc.get("_id"));
        }
        return normalized;
    }

    static boolean equal(Object a, Object b) {
        return compare(a, b) == 0;
    }

    /** MongoDB's order of values: by type first (null, numbers, strings, documents, arrays, ...), then by value. */
    static int compare(Object a, Object b) {
        int ta = rank(a);
        int tb = rank(b);
        if (ta != tb) {
            return Integer.compare(ta, tb);
        }
        if (a instanceof Number x && b instanceof Number y) {
            if (!Numbers.isFinite(x) || !Numbers.isFinite(y)) {
                return Double.compare(x.doubleValue(), y.doubleValue());
            }
            return Numbers.exact(x).compareTo(Numbers.exact(y));
        }
        if (a instanceof Document x && b instanceof Document y) {
            List<Map.Entry<String, Object>> ex = new ArrayList<>(x.entrySet());
            List<Map.Entry<String, Object>> ey = new ArrayList<>(y.entrySet());
            for (int i = 0; i < Math.min(ex.size(), ey.size()); i++) {
                int c = ex.get(i).getKey().compareTo(ey.get(i).getKey());
                if (c == 0) {
                    c = compare(ex.get(i).getValue(), ey.get(i).getValue());
                }
                if (c != 0) {
                    return c;
                }
            }
            return Integer.compare(ex.size(), ey.size());
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                int c = compare(x.get(i), y.get(i));
                if (c != 0) {
                    return c;
                }
            }
            return Integer.compare(x.size(), y.size());
        }
        if (a instanceof Comparable<?> && a.getClass() == b.getClass()) {
            @SuppressWarnings("unchecked")
            Comparable<Object> ca = (Comparable<Object>) a;
            return ca.compareTo(b);
        }
        return a == null ? 0 : a.equals(b) ? 0 : String.valueOf(a).compareTo(String.valueOf(b));
    }

    private static int rank(Object v) {
        if (v == null) {
            return 1;
        }
        if (v instanceof Number) {
            return 2;
        }
        if (v instanceof String) {
            return 3;
        }
        if (v instanceof Document || v instanceof Map) {
            return 4;
        }
        if (v instanceof List) {
            return 5;
        }
        if (v instanceof Binary || v instanceof byte[]) {
            return 6;
        }
        if (v instanceof ObjectId) {
            return 7;
        }
        if (v instanceof Boolean) {
            return 8;
        }
        if (v instanceof Date) {
            return 9;
        }
        if (v instanceof BsonTimestamp) {
            return 10;
        }
        return 11;
    }

    /** {@code a + b} as {@code $inc} adds: Decimal128 if either is, else double if either is, else int if both are and it fits, else long. */
    static Number add(Number a, Number b) {
        if (a instanceof Decimal128 || b instanceof Decimal128) {
            return new Decimal128(Numbers.exact(a).add(Numbers.exact(b)));
        }
        if (a instanceof Double || b instanceof Double) {
            return a.doubleValue() + b.doubleValue();
        }
        long sum = Math.addExact(a.longValue(), b.longValue());
        return a instanceof Integer && b instanceof Integer && sum == (int) sum ? (Number) (int) sum : (Number) sum;
    }

    /** {@code a * b} as {@code $mul} multiplies, in the same types as {@link #add}. */
    static Number multiply(Number a, Number b) {
        if (a instanceof Decimal128 || b instanceof Decimal128) {
            BigDecimal product = Numbers.exact(a).multiply(Numbers.exact(b));
            return new Decimal128(product);
        }
        if (a instanceof Double || b instanceof Double) {
            return a.doubleValue() * b.doubleValue();
        }
        long product = Math.multiplyExact(a.longValue(), b.longValue());
        return a instanceof Integer && b instanceof Integer && product == (int) product ? (Number) (int) product : (Number) product;
    }

    /** Zero in the type of {@code like} (a {@code $mul} of a missing field sets it to zero). */
    static Number zero(Number like) {
        return like instanceof Decimal128 ? Decimal128.parse("0") : like instanceof Double ? (Number) 0.0
                : like instanceof Long ? (Number) 0L : (Number) 0;
    }
}
