package io.mongo2pc.internal.interactive;

import io.mongo2pc.InvalidTransactionException;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * MongoDB's update operators applied to a document held in memory, as the server would apply them:
 * the interactive transaction's buffer, so that a body reads its own writes and several updates of
 * one document become one write. Fields by dotted path through embedded documents and array
 * indexes. {@code $currentDate} (the server's clock) and the array modifiers other than
 * {@code $each} are refused before anything is written, as are changes the server would refuse
 * (an {@code $inc} of text, a path through a value that is neither a document nor an array).
 * Stateless.
 */
final class UpdateOperators {
    private UpdateOperators() { }

    /** {@code doc} (not changed) with {@code update} applied; {@code where} names the document in errors. */
    static Document apply(Document doc, Document update, Object where) {
        Document result = BsonValues.copy(doc);
        update.forEach((operator, fields) -> ((Document) fields).forEach((path, operand) ->
                applyOne(result, operator, path, operand, where)));
        return result;
    }

    private static void applyOne(Document doc, String operator, String path, Object operand, Object where) {
        try {
            applyChecked(doc, operator, path, operand, where);
        } catch (ArithmeticException e) {
            throw new InvalidTransactionException(where + ": " + operator + " of '" + path + "' overflows: " + e.getMessage());
        }
    }

    private static void applyChecked(Document doc, String operator, String path, Object operand, Object where) {
        Object current = get(doc, path);
        switch (operator) {
            case "$set" -> set(doc, path, BsonValues.copy(operand, v -> v), where);
            case "$unset" -> unset(doc, path);
            case "$inc" -> set(doc, path, current == null ? operand : BsonValues.add(number(current, operator, path, where), (Number) operand), where);
            case "$mul" -> set(doc, path, current == null ? BsonValues.zero((Number) operand)
                    : BsonValues.multiply(number(current, operator, path, where), (Number) operand), where);
            case "$min", "$max" -> {
                boolean missing = !has(doc, path);
                int c = missing ? 0 : BsonValues.compare(operand, current);
                if (missing || (operator.equals("$min") ? c < 0 : c > 0)) {
                    set(doc, path, BsonValues.copy(operand, v -> v), where);
                }
            }
            case "$rename" -> {
                if (has(doc, path)) {
                    unset(doc, path);
                    set(doc, (String) operand, current, where);
                }
            }
            case "$push", "$addToSet" -> {
                List<Object> list = array(doc, path, operator, where);
                for (Object item : each(operand, operator, where)) {
                    if (operator.equals("$push") || list.stream().noneMatch(x -> BsonValues.equal(x, item))) {
                        list.add(BsonValues.copy(item, v -> v));
                    }
                }
            }
            case "$pop" -> {
                if (current != null) {
                    List<Object> list = array(doc, path, operator, where);
                    if (!list.isEmpty()) {
                        list.remove(((Number) operand).intValue() < 0 ? 0 : list.size() - 1);
                    }
                }
            }
            case "$pull" -> {
                if (current != null) {
                    array(doc, path, operator, where).removeIf(item -> pulls(operand, item));
                }
            }
            case "$pullAll" -> {
                if (current != null) {
                    List<?> values = (List<?>) operand;
                    array(doc, path, operator, where).removeIf(item -> values.stream().anyMatch(v -> BsonValues.equal(v, item)));
                }
            }
            default -> throw new InvalidTransactionException(where + ": update operator '" + operator + "' is not supported in an interactive"
                    + " transaction (set a date with $set instead of $currentDate)");
        }
    }

    /** Refuses what {@link #apply} cannot do as the server would, before anything is written. */
    static void check(Document update, Object where) {
        update.forEach((operator, fields) -> {
            if (operator.equals("$currentDate")) {
                throw new InvalidTransactionException(where + ": $currentDate is not supported in an interactive transaction"
                        + " (the server's clock is not read there): set the date with $set");
            }
            if ((operator.equals("$push") || operator.equals("$addToSet")) && fields instanceof Document f) {
                f.values().forEach(v -> each(v, operator, where));
            }
            if (operator.equals("$pull") && fields instanceof Document f) {
                f.values().forEach(v -> {
                    if (v instanceof Document condition && condition.keySet().stream().anyMatch(k -> k.startsWith("$"))) {
                        throw new InvalidTransactionException(where + ": $pull with query operators " + condition.keySet()
                                + " is not supported in an interactive transaction: pull by value, or by a document's plain fields");
                    }
                });
            }
        });
    }

    /** The items of a {@code $push} or {@code $addToSet}: its value, or the values of its {@code $each}. */
    private static List<?> each(Object operand, String operator, Object where) {
        if (operand instanceof Document d && d.keySet().stream().anyMatch(k -> k.startsWith("$"))) {
            if (d.size() != 1 || !(d.get("$each") instanceof List<?> items)) {
                throw new InvalidTransactionException(where + ": " + operator + " supports $each alone in an interactive transaction, got "
                        + d.keySet());
            }
            return items;
        }
        return List.of(operand);
    }

    /** True if {@code $pull}'s {@code condition} removes {@code item}: equal, or a document with every field of the condition equal. */
    private static boolean pulls(Object condition, Object item) {
        if (condition instanceof Document c && item instanceof Document d) {
            for (Map.Entry<String, Object> e : c.entrySet()) {
                if (!has(d, e.getKey()) || !BsonValues.equal(get(d, e.getKey()), e.getValue())) {
                    return false;
                }
            }
            return true;
        }
        return BsonValues.equal(condition, item);
    }

    private static Number number(Object current, String operator, String path, Object where) {
        if (current instanceof Number n) {
            return n;
        }
        throw new InvalidTransactionException(where + ": cannot apply " + operator + " to '" + path + "', which holds a non-numeric value");
    }

    /** The array at {@code path}, created empty if missing; refused if the field holds something else. */
    private static List<Object> array(Document doc, String path, String operator, Object where) {
        Object current = get(doc, path);
        if (current == null && !has(doc, path)) {
            List<Object> created = new ArrayList<>();
            set(doc, path, created, where);
            return created;
        }
        if (current instanceof List<?>) {
            @SuppressWarnings("unchecked")
            List<Object> list = (List<Object>) current;
            return list;
        }
        throw new InvalidTransactionException(where + ": cannot apply " + operator + " to '" + path + "', which is not an array");
    }

    static Object get(Document doc, String path) {
        Object value = doc;
        for (String part : path.split("\\.")) {
            value = child(value, part);
            if (value == null) {
                return null;
            }
        }
        return value;
    }

    private static boolean has(Document doc, String path) {
        String[] parts = path.split("\\.");
        Object parent = doc;
        for (int i = 0; i < parts.length - 1; i++) {
            parent = child(parent, parts[i]);
        }
        if (parent instanceof Document d) {
            return d.containsKey(parts[parts.length - 1]);
        }
        return parent instanceof List<?> list && index(parts[parts.length - 1]) >= 0 && index(parts[parts.length - 1]) < list.size();
    }

    private static Object child(Object value, String part) {
        if (value instanceof Document d) {
            return d.get(part);
        }
        if (value instanceof List<?> list) {
            int i = index(part);
            return i >= 0 && i < list.size() ? list.get(i) : null;
        }
        return null;
    }

    private static int index(String part) {
        if (part.isEmpty() || part.length() > 9 || !part.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Integer.parseInt(part);
    }

    /** Sets {@code path} to {@code value}, creating embedded documents on the way (and array elements, padded with nulls). */
    @SuppressWarnings("unchecked")
    static void set(Document doc, String path, Object value, Object where) {
        String[] parts = path.split("\\.");
        Object parent = doc;
        for (int i = 0; i < parts.length; i++) {
            boolean last = i == parts.length - 1;
            String part = parts[i];
            Object next = last ? value : child(parent, part);
            if (!last && next == null) {
                next = new Document();
            }
            if (parent instanceof Document d) {
                if (!last && !(next instanceof Document || next instanceof List)) {
                    throw cannotCreate(path, part, where);
                }
                if (last || !d.containsKey(part) || d.get(part) == null) {
                    d.put(part, next);
                }
            } else if (parent instanceof List<?> list && index(part) >= 0) {
                List<Object> items = (List<Object>) list;
                while (items.size() <= index(part)) {
                    items.add(null);
                }
                if (last || items.get(index(part)) == null) {
                    items.set(index(part), next);
                }
            } else {
                throw cannotCreate(path, part, where);
            }
            parent = next;
        }
    }

    private static InvalidTransactionException cannotCreate(String path, String part, Object where) {
        return new InvalidTransactionException(where + ": cannot set '" + path + "': '" + part + "' is under a value that is neither a"
                + " document nor an array");
    }

    /** Removes {@code path} (an array element becomes null, as the server's {@code $unset} does). */
    @SuppressWarnings("unchecked")
    private static void unset(Document doc, String path) {
        int dot = path.lastIndexOf('.');
        Object parent = dot < 0 ? doc : get(doc, path.substring(0, dot));
        String last = path.substring(dot + 1);
        if (parent instanceof Document d) {
            d.remove(last);
        } else if (parent instanceof List<?> list && index(last) >= 0 && index(last) < list.size()) {
            ((List<Object>) list).set(index(last), null);
        }
    }
}
