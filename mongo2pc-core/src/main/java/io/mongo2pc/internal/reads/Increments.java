package io.mongo2pc.internal.reads;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.internal.format.Ids;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The arithmetic of increments on stored documents, for readers that add or take away the effect
 * of a transaction: fields by dotted path ({@code "totals.eur"}), amounts added exactly in the
 * type of the stored number (Decimal128 if either is). Stateless.
 */
final class Increments {
    private Increments() { }

    /** The increments {@code ops} make to the document {@code ref}, or null if they make none. */
    static Document of(List<Operation> ops, DocumentRef ref) {
        for (Operation op : ops) {
            if (op instanceof Operation.Increment inc && touches(op, ref)) {
                return inc.increments();
            }
        }
        return null;
    }

    /** True if {@code op} changes the document {@code ref}. */
    static boolean touches(Operation op, DocumentRef ref) {
        DocumentRef other = op.document();
        return other.target().equals(ref.target()) && other.database().equals(ref.database())
                && other.collection().equals(ref.collection()) && Ids.sameId(other.id(), ref.id());
    }

    /**
     * Adds {@code sign} times each increment to {@code doc} in place, as {@code $inc} would (a
     * missing field is created by an addition); a field that is not a number stays as it is (the
     * server refuses such an increment, so it never took effect).
     */
    static void add(Document doc, Document increments, int sign) {
        for (Map.Entry<String, Object> e : increments.entrySet()) {
            Object current = get(doc, e.getKey());
            if (!(e.getValue() instanceof Number amount)) {
                continue;
            }
            if (current instanceof Number n) {
                put(doc, e.getKey(), plus(n, amount, sign));
            } else if (current == null && sign > 0) {
                put(doc, e.getKey(), amount);
            }
        }
    }

    /** True if {@code a} and {@code b} hold the same content, numbers compared by value whatever their type. */
    static boolean sameContent(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y && Numbers.isFinite(x) && Numbers.isFinite(y)) {
            return Numbers.exact(x).compareTo(Numbers.exact(y)) == 0;
        }
        if (a instanceof Document x && b instanceof Document y) {
            if (!x.keySet().equals(y.keySet())) {
                return false;
            }
            for (Map.Entry<String, Object> e : x.entrySet()) {
                if (!sameContent(e.getValue(), y.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!sameContent(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return Objects.equals(a, b);
    }

    /** The value at a dotted path, or null. */
    static Object get(Document doc, String path) {
        Object value = doc;
        for (String part : path.split("\\.")) {
            if (!(value instanceof Document d)) {
                return null;
            }
            value = d.get(part);
        }
        return value;
    }

    /** Sets the value at a dotted path, creating embedded documents on the way; does nothing through a non-document. */
    private static void put(Document doc, String path, Object value) {
        String[] parts = path.split("\\.");
        Document parent = doc;
        for (int i = 0; i < parts.length - 1; i++) {
            Object next = parent.get(parts[i]);
            if (next == null) {
                next = new Document();
                parent.put(parts[i], next);
            }
            if (!(next instanceof Document d)) {
                return;
            }
            parent = d;
        }
        parent.put(parts[parts.length - 1], value);
    }

    /** {@code a + sign * b}, in the type of {@code a} (Decimal128 if either is; long if an int overflows). */
    static Number plus(Number a, Number b, int sign) {
        if (a instanceof Decimal128 || b instanceof Decimal128) {
            BigDecimal delta = Numbers.exact(b);
            return new Decimal128(Numbers.exact(a).add(sign < 0 ? delta.negate() : delta));
        }
        if (a instanceof Double || b instanceof Double) {
            return a.doubleValue() + sign * b.doubleValue();
        }
        long result = sign < 0 ? a.longValue() - b.longValue() : a.longValue() + b.longValue();
        return a instanceof Integer && b instanceof Integer && result == (int) result ? (Number) (int) result : (Number) result;
    }
}
