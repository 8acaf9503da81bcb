package io.mongo2pc.cli;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.Values;
import org.bson.Document;
import org.bson.json.JsonParseException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a generic transaction written in JSON (MongoDB extended JSON), as the CLI's {@code tx}
 * takes it:
 * <pre>{@code
 * {"ops": [
 *   {"op": "insert", "target": "default", "db": "shop", "coll": "payments", "doc": {"_id": "p1", "amount": 30}},
 *   {"op": "update", "db": "shop", "coll": "orders", "id": "o1", "update": {"$set": {"state": "Paid"}}, "guard": {"state": "UnPaid"}},
 *   {"op": "inc", "db": "bank", "coll": "accounts", "id": "A", "inc": {"balance": -30}, "guard": {"balance": {"$gte": 30}}},
 *   {"op": "delete", "db": "shop", "coll": "carts", "id": "c9"}
 * ]}
 * }</pre>
 * {@code target} defaults to {@code default}. Anything malformed is refused with an
 * {@link InvalidTransactionException} naming the operation and the field. The text is read as
 * {@code Document.parse} reads it, which is lenient (unquoted names, the last of duplicate keys,
 * text after the object ignored): check it as strict JSON first where that matters, as the CLI's
 * {@code tx} does. Stateless.
 */
final class TransactionJson {
    private static final Set<String> KNOWN = Set.of("op", "target", "db", "coll", "id", "doc", "update", "inc", "guard",
            "allowTypeChange");

    private TransactionJson() { }

    public static List<Operation> parse(String json) {
        Document root;
        try {
            root = Document.parse(json);
        } catch (JsonParseException | IllegalArgumentException e) {
            throw new InvalidTransactionException("a bad value in the transaction's extended JSON: " + JsonErrors.ofExtended(e.getMessage(), json));
        } catch (RuntimeException e) {
            // e.g. an empty text or a JSON array: the parser's own words name its Java internals
            throw new InvalidTransactionException("not a JSON object: a transaction is {\"ops\": [...]}");
        }
        Object ops = root.get("ops");
        if (!(ops instanceof List<?> list)) {
            throw new InvalidTransactionException("a transaction is {\"ops\": [...]}; got " + (root.containsKey("ops")
                    ? "\"ops\" as " + jsonKind(ops) + ", not a list"
                    : "keys " + root.keySet()));
        }
        if (root.size() > 1) {
            throw new InvalidTransactionException("unknown top-level keys " + root.keySet() + "; only \"ops\" is allowed");
        }
        List<Operation> operations = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Document op)) {
                throw new InvalidTransactionException("operation " + i + " is not an object: " + Values.describe(list.get(i)));
            }
            operations.add(operation(i, op));
        }
        return operations;
    }

    /** What a parsed value was in the JSON text, in JSON's words. */
    private static String jsonKind(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Document) {
            return "an object";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        return value instanceof Number ? "a number" : Values.kind(value);
    }

    private static Operation operation(int i, Document op) {
        String where = "operation " + i;
        for (String key : op.keySet()) {
            if (!KNOWN.contains(key)) {
                throw new InvalidTransactionException(where + ": unknown key '" + key + "' (known: " + KNOWN + ")");
            }
        }
        String kind = string(op, "op", where);
        String target = op.containsKey("target") ? string(op, "target", where) : DocumentRef.DEFAULT_TARGET;
        String db = string(op, "db", where);
        String coll = string(op, "coll", where);
        Document guard = optionalDocument(op, "guard", where);
        if (op.containsKey("allowTypeChange") && !kind.equals("inc") && !kind.equals("update")) {
            throw new InvalidTransactionException(where + ": \"allowTypeChange\" is for inc and update only");
        }
        switch (kind) {
            case "insert" -> {
                Document doc = document(op, "doc", where);
                if (!doc.containsKey("_id")) {
                    throw new InvalidTransactionException(where + ": an insert's doc needs an _id");
                }
                if (op.containsKey("id") && !op.get("id").equals(doc.get("_id"))) {
                    throw new InvalidTransactionException(where + ": id and doc._id differ");
                }
                if (guard != null) {
                    throw new InvalidTransactionException(where + ": an insert takes no guard (it is canceled if the _id exists)");
                }
                return new Operation.Insert(new DocumentRef(target, db, coll, doc.get("_id")), doc);
            }
            case "update" -> {
                Operation.Update update = new Operation.Update(new DocumentRef(target, db, coll, id(op, where)),
                        document(op, "update", where), guard);
                return allowTypeChange(op, where) ? update.with(Operation.Flag.ALLOW_TYPE_CHANGE) : update;
            }
            case "delete" -> {
                return new Operation.Delete(new DocumentRef(target, db, coll, id(op, where)), guard);
            }
            case "inc" -> {
                Operation.Increment inc = new Operation.Increment(new DocumentRef(target, db, coll, id(op, where)),
                        document(op, "inc", where), guard);
                return allowTypeChange(op, where) ? inc.with(Operation.Flag.ALLOW_TYPE_CHANGE) : inc;
            }
            default -> throw new InvalidTransactionException(where + ": unknown op '" + kind + "' (insert, update, delete, inc)");
        }
    }

    /** {@code "allowTypeChange": true}: the operation's increments may change a stored number's type or scale. */
    private static boolean allowTypeChange(Document op, String where) {
        Object value = op.get("allowTypeChange");
        if (value != null && !(value instanceof Boolean)) {
            throw new InvalidTransactionException(where + ": \"allowTypeChange\" must be true or false, got " + Values.describe(value));
        }
        return Boolean.TRUE.equals(value);
    }

    private static Object id(Document op, String where) {
        if (!op.containsKey("id")) {
            throw new InvalidTransactionException(where + ": missing \"id\"");
        }
        return op.get("id");
    }

    private static String string(Document op, String key, String where) {
        Object value = op.get(key);
        if (!(value instanceof String s) || s.isEmpty()) {
            throw new InvalidTransactionException(where + ": \"" + key + "\" must be a non-empty string, got "
                    + (value == null ? "none" : Values.describe(value)));
        }
        return s;
    }

    private static Document document(Document op, String key, String where) {
        Document doc = optionalDocument(op, key, where);
        if (doc == null) {
            throw new InvalidTransactionException(where + ": missing \"" + key + "\" (an object)");
        }
        return doc;
    }

    private static Document optionalDocument(Document op, String key, String where) {
        Object value = op.get(key);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?>)) {
            throw new InvalidTransactionException(where + ": \"" + key + "\" must be an object, got " + Values.describe(value));
        }
        return (Document) value;
    }
}
