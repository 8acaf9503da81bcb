package io.mongo2pc.internal.state;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.Values;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses bad operations before anything is written: ids that are not plain values, field names
 * that are operators or the library's own markers, amounts that are zero, not numbers or cannot
 * be undone, guards with operators outside the allow-list, unknown targets, a document touched
 * twice, and transactions over the size limits.
 */
public final class Validation {
    /** Query operators a guard may use; anything else (code such as $where) is refused. */
    private static final Set<String> GUARD_OPERATORS = Set.of(
            "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type",
            "$and", "$or", "$nor", "$not", "$size", "$all", "$elemMatch", "$mod", "$regex", "$options");

    /** Update operators an update may use; anything else is refused. */
    private static final Set<String> UPDATE_OPERATORS = Set.of(
            "$set", "$unset", "$inc", "$mul", "$min", "$max", "$push", "$pull", "$pullAll", "$addToSet", "$pop",
            "$rename", "$currentDate");

    /** The most bytes the operations of one transaction may take when stored. */
    public static final int MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

    private Validation() { }

    public static void check(List<Operation> operations, Set<String> targets, int maxOperations) {
        if (operations == null || operations.isEmpty()) {
            throw new InvalidTransactionException("a transaction needs at least one operation");
        }
        if (operations.size() > maxOperations) {
            throw new InvalidTransactionException("a transaction may have at most " + maxOperations
                    + " operations, got " + operations.size());
        }
        Set<DocumentRef> seen = new HashSet<>();
        for (int i = 0; i < operations.size(); i++) {
            Operation op = operations.get(i);
            DocumentRef ref = op.document();
            // Spelled out only when a check fails (most transactions are valid).
            int index = i;
            Object where = new Object() {
                @Override
                public String toString() {
                    return "operation " + index + " on " + ref;
                }
            };
            if (!targets.contains(ref.target())) {
                throw new InvalidTransactionException(where + ": unknown target '" + ref.target() + "', known: " + targets);
            }
            checkName(ref.database(), "database", where);
            checkName(ref.collection(), "collection", where);
            DocumentRef.requirePlainId(ref.id(), where);
            if (!seen.add(ref.withComparableId())) {
                throw new InvalidTransactionException(where + ": the same document appears twice in one transaction");
            }
            checkGuard(op.guard(), where);
            if (op instanceof Operation.Increment inc) {
                checkIncrements(inc.increments(), where);
            } else if (op instanceof Operation.Insert insert) {
                checkStoredDocument(insert.content(), ref.id(), where);
            } else if (op instanceof Operation.Update update) {
                checkUpdate(update, where);
            }
        }
        Document stored = new Document("ops", OperationCodec.encode(operations));
        // Encoded only when a cheap upper bound of the size does not already settle it.
        int bytes = maxBytes(stored, 0) <= MAX_TRANSACTION_BYTES ? 0
                : new RawBsonDocument(stored, new DocumentCodec()).getByteBuffer().remaining();
        if (bytes > MAX_TRANSACTION_BYTES) {
            throw new InvalidTransactionException("a transaction may take at most " + MAX_TRANSACTION_BYTES
                    + " bytes of operations, got " + bytes);
        }
    }

    /**
     * At least the BSON size of {@code value} (never less): per element a type byte and its name
     * (at most 3 bytes per UTF-16 unit, plus the terminator), numbers, ids and dates at most 16
     * bytes, strings at most 3 bytes per unit plus 5. Long.MAX_VALUE for any other type (the exact
     * encoding then decides, and refuses what cannot be encoded) or nesting deeper than 100.
     */
    static long maxBytes(Object value, int depth) {
        if (depth > 100) {
            return Long.MAX_VALUE;
        }
        if (value == null || value instanceof Boolean) {
            return 1;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Double || value instanceof Decimal128
                || value instanceof ObjectId || value instanceof Date) {
            return 16;
        }
        if (value instanceof String text) {
            return 5L + 3L * text.length();
        }
        if (value instanceof Map<?, ?> map) {
            long total = 5;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                long element = maxBytes(e.getValue(), depth + 1);
                if (element == Long.MAX_VALUE) {
                    return Long.MAX_VALUE;
                }
                total += 2 + 3L * String.valueOf(e.getKey()).length() + element;
            }
            return total;
        }
        if (value instanceof List<?> list) {
            long total = 5;
            for (Object item : list) {
                long element = maxBytes(item, depth + 1);
                if (element == Long.MAX_VALUE) {
                    return Long.MAX_VALUE;
                }
                total += 2 + 11 + element; // a type byte, an index name of at most 10 digits and its terminator
            }
            return total;
        }
        return Long.MAX_VALUE;
    }

    private static void checkUpdate(Operation.Update update, Object where) {
        Document doc = update.update();
        if (doc.isEmpty()) {
            throw new InvalidTransactionException(where + ": an update needs update operators or a replacement document");
        }
        if (update.isReplacement()) {
            checkStoredDocument(doc, update.document().id(), where);
            return;
        }
        for (Map.Entry<String, Object> e : doc.entrySet()) {
            if (!UPDATE_OPERATORS.contains(e.getKey())) {
                throw new InvalidTransactionException(where + ": update operator '" + e.getKey() + "' is not allowed (allowed: "
                        + new TreeSet<>(UPDATE_OPERATORS) + "; operators and replacement fields cannot be mixed)");
            }
            if (!(e.getValue() instanceof Document fields) || fields.isEmpty()) {
                throw new InvalidTransactionException(where + ": " + e.getKey() + " needs a document of fields, got "
                        + Values.describe(e.getValue()));
            }
            for (Map.Entry<String, Object> field : fields.entrySet()) {
                checkField(field.getKey(), where);
                if (e.getKey().equals("$rename") && field.getValue() instanceof String target) {
                    checkField(target, where);
                }
                checkNoOperatorKeys(field.getValue(), where, e.getKey().equals("$pull"));
                checkOperand(e.getKey(), field.getKey(), field.getValue(), where);
            }
        }
        checkNoConflictingPaths(doc, where);
    }

    /**
     * The value an operator needs, as MongoDB checks it when it parses the update (under the
     * two-round commit: at the release, after the commit point, so it is checked here instead).
     */
    private static void checkOperand(String operator, String field, Object value, Object where) {
        String needs = switch (operator) {
            case "$inc", "$mul" -> value instanceof Integer || value instanceof Long || value instanceof Double
                    || value instanceof Decimal128 ? null : "a number";
            case "$currentDate" -> value instanceof Boolean ? null : "true";
            case "$pop" -> value instanceof Number n && (n.doubleValue() == 1 || n.doubleValue() == -1) ? null : "1 or -1";
            case "$pullAll" -> value instanceof List<?> ? null : "an array";
            case "$rename" -> value instanceof String ? null : "a field name";
            default -> null;
        };
        if (needs != null) {
            throw new InvalidTransactionException(where + ": " + operator + " of '" + field + "' needs " + needs + ", got "
                    + Values.describe(value));
        }
    }

    /**
     * Two operators of one update may not change the same field, or a field and a part of it: the
     * server refuses that update when it applies it (under the two-round commit, at the release,
     * after the commit point), so it is refused here, before anything is written.
     */
    private static void checkNoConflictingPaths(Document update, Object where) {
        List<String> paths = new ArrayList<>();
        update.forEach((operator, fields) -> ((Document) fields).forEach((field, value) -> {
            paths.add(field);
            if (operator.equals("$rename") && value instanceof String target) {
                paths.add(target);
            }
        }));
        for (int i = 0; i < paths.size(); i++) {
            for (int j = i + 1; j < paths.size(); j++) {
                String a = paths.get(i);
                String b = paths.get(j);
                if (a.equals(b) || a.startsWith(b + ".") || b.startsWith(a + ".")) {
                    throw new InvalidTransactionException(where + ": the update changes '" + a + "' and '" + b
                            + "' (one field, or a field and a part of it): change each field once");
                }
            }
        }
    }

    /** A document to store (insert, replacement): no operator keys, no reserved fields, its _id the reference's. */
    private static void checkStoredDocument(Document doc, Object id, Object where) {
        for (String key : doc.keySet()) {
            if (key.equals(Fields.ID)) {
                if (!Objects.equals(DocumentRef.comparableId(doc.get(key)), DocumentRef.comparableId(id))) {
                    throw new InvalidTransactionException(where + ": the document's _id " + Values.describe(doc.get(key))
                            + " differs from the operation's id " + Values.describe(id));
                }
                continue;
            }
            checkField(key, where);
        }
        checkNoOperatorKeys(doc, where, false);
    }

    /** Values stored by a change may not contain keys starting with '$' (query operators smuggled in as data). */
    private static void checkNoOperatorKeys(Object value, Object where, boolean queryAllowed) {
        if (value instanceof Document doc) {
            for (Map.Entry<String, Object> e : doc.entrySet()) {
                if (e.getKey().startsWith("$") && !(queryAllowed && GUARD_OPERATORS.contains(e.getKey()))) {
                    throw new InvalidTransactionException(where + ": key '" + e.getKey() + "' is not allowed in stored values");
                }
                checkNoOperatorKeys(e.getValue(), where, queryAllowed);
            }
        } else if (value instanceof List<?> list) {
            list.forEach(item -> checkNoOperatorKeys(item, where, queryAllowed));
        }
    }

    private static void checkName(String name, String what, Object where) {
        String problem = "database".equals(what) ? DocumentRef.databaseNameProblem(name) : DocumentRef.collectionNameProblem(name);
        if (problem != null) {
            throw new InvalidTransactionException(where + ": invalid " + what + " name '" + name + "': " + problem);
        }
    }

    private static void checkIncrements(Document increments, Object where) {
        if (increments.isEmpty()) {
            throw new InvalidTransactionException(where + ": an increment needs at least one field");
        }
        for (Map.Entry<String, Object> e : increments.entrySet()) {
            checkField(e.getKey(), where);
            Object amount = e.getValue();
            if (!(amount instanceof Integer || amount instanceof Long || amount instanceof Decimal128 || amount instanceof Double)) {
                throw new InvalidTransactionException(where + ": amount of '" + e.getKey() + "' must be a number (integer or Decimal128), got "
                        + Values.describe(amount));
            }
            if (isZero((Number) amount)) {
                throw new InvalidTransactionException(where + ": amount of '" + e.getKey() + "' must not be zero");
            }
            if (amount instanceof Long l && l == Long.MIN_VALUE || amount instanceof Integer n && n == Integer.MIN_VALUE) {
                throw new InvalidTransactionException(where + ": amount of '" + e.getKey() + "' cannot be undone (its negation overflows): " + amount);
            }
            if (amount instanceof Double d && (d.isNaN() || d.isInfinite())
                    || amount instanceof Decimal128 dec && (dec.isNaN() || dec.isInfinite())) {
                throw new InvalidTransactionException(where + ": amount of '" + e.getKey() + "' must be finite, got " + amount);
            }
        }
    }

    static boolean isZero(Number amount) {
        if (amount instanceof Decimal128 d) {
            return Numbers.isFinite(d) && Numbers.exact(d).signum() == 0; // a negative zero is zero too
        }
        if (amount instanceof Double d) {
            return d == 0.0;
        }
        return amount.longValue() == 0;
    }

    /** Field names of user changes: no operators, no empty path parts, not the library's own fields. */
    public static void checkField(String field, Object where) {
        if (field == null || field.isEmpty() || field.startsWith("$") || field.contains(".$") || field.startsWith(".")
                || field.endsWith(".") || field.contains("..") || field.contains("\0")) {
            throw new InvalidTransactionException(where + ": invalid field name '" + field + "'");
        }
        String root = field.contains(".") ? field.substring(0, field.indexOf('.')) : field;
        if (root.equals(Fields.ID) || reserved(root)) {
            throw new InvalidTransactionException(where + ": field '" + field + "' is reserved and cannot be changed by an operation");
        }
    }

    /**
     * True for a top-level field the library keeps on participants: the markers, an exclusive
     * operation's lock, the two-round commit's entries and the version (every name starting with {@code _m2pc_}).
     */
    private static boolean reserved(String root) {
        return root.equals(Fields.MARKERS) || root.equals(Fields.LOCK) || root.startsWith(EntryName.PREFIX);
    }

    static void checkGuard(Document guard, Object where) {
        checkGuardValue(guard, where, 0);
    }

    private static void checkGuardValue(Object value, Object where, int depth) {
        if (depth > 20) {
            throw new InvalidTransactionException(where + ": guard nested too deeply");
        }
        if (value instanceof Document doc) {
            for (Map.Entry<String, Object> e : doc.entrySet()) {
                String key = e.getKey();
                if (key.startsWith("$") && !GUARD_OPERATORS.contains(key)) {
                    throw new InvalidTransactionException(where + ": guard operator '" + key + "' is not allowed (allowed: "
                            + new TreeSet<>(GUARD_OPERATORS) + ")");
                }
                String root = key.indexOf('.') < 0 ? key : key.substring(0, key.indexOf('.'));
                if (!key.startsWith("$") && (reserved(root) || (depth == 0 && root.equals(Fields.ID)))) {
                    throw new InvalidTransactionException(where + ": guard may not test the reserved field '" + key + "'");
                }
                checkGuardValue(e.getValue(), where, depth + 1);
            }
        } else if (value instanceof List<?> list) {
            for (Object item : list) {
                checkGuardValue(item, where, depth + 1);
            }
        }
    }
}
