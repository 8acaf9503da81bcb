package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.bson.Decimal128;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Answers the filter clauses a transaction's writes use, without upstream's general matcher (which
 * splits every field path with a regular expression): equality with a string, ObjectId, UUID,
 * boolean or integer; {@code $ne} and {@code $in} of the first four; {@code $exists}; {@code $gt}, {@code $gte}, {@code $lt},
 * {@code $lte} of integers; an array position's {@code $exists} ({@code "markers.999"}); and
 * {@code $expr: {$lt: ["$$NOW", date]}}. Whenever a clause or a value is of any other kind, or an
 * array holds values of another type, it answers "unknown" and the caller asks upstream for the
 * whole filter. {@code SimpleMatcherTest} checks every answer it gives against upstream's.
 * Stateless and thread-safe.
 */
final class SimpleMatcher {
    private SimpleMatcher() {
    }

    /** True or false if this class can tell whether {@code document} matches {@code query}; null if not. */
    static Boolean matches(Document document, Document query) {
        for (Map.Entry<String, Object> clause : query.entrySet()) {
            Boolean holds = clause(document, clause.getKey(), clause.getValue());
            if (holds == null) {
                return null;
            }
            if (!holds) {
                // The rest could still be one upstream refuses as malformed: let it decide.
                return allKnown(query) ? Boolean.FALSE : null;
            }
        }
        return Boolean.TRUE;
    }

    /** True if every clause of {@code query} is of a kind this class answers. */
    private static boolean allKnown(Document query) {
        Document empty = new Document();
        for (Map.Entry<String, Object> clause : query.entrySet()) {
            if (clause(empty, clause.getKey(), clause.getValue()) == null) {
                return false;
            }
        }
        return true;
    }

    private static Boolean clause(Document document, String key, Object condition) {
        if (key.equals("$expr")) {
            return nowBefore(condition);
        }
        if (key.isEmpty() || key.startsWith("$")) {
            return null;
        }
        int dot = key.indexOf('.');
        if (dot >= 0) {
            return arrayPositionExists(document, key, dot, condition);
        }
        boolean present = document.containsKey(key);
        Object value = document.get(key);
        if (!(condition instanceof Document operators)) {
            return isPlain(condition) ? equalTo(present, value, condition)
                    : isInteger(condition) ? integerEqualTo(present, value, condition)
                    : isExactNumber(condition) ? exactCompare(present, value, "$eq", condition) : null;
        }
        if (operators.size() != 1) {
            return null;
        }
        Map.Entry<String, Object> only = operators.entrySet().iterator().next();
        Object operand = only.getValue();
        return switch (only.getKey()) {
            case "$ne" -> {
                Boolean equal = isPlain(operand) ? equalTo(present, value, operand) : null;
                yield equal == null ? null : !equal;
            }
            case "$exists" -> operand instanceof Boolean wanted ? present == wanted : null;
            case "$in" -> in(present, value, operand);
            case "$gt", "$gte", "$lt", "$lte" -> compare(present, value, only.getKey(), operand);
            default -> null;
        };
    }

    /** Equality with a plain value: the field holds it, or is an array of such values that holds it. */
    private static Boolean equalTo(boolean present, Object value, Object wanted) {
        if (!present) {
            return false;
        }
        if (value instanceof List<?> list) {
            for (Object element : list) {
                if (element == null || element.getClass() != wanted.getClass()) {
                    return null;
                }
            }
            return list.contains(wanted);
        }
        if (value == null || value.getClass() != wanted.getClass()) {
            return null;
        }
        return value.equals(wanted);
    }

    /** {@code $in} of plain values: equality with any of them. */
    private static Boolean in(boolean present, Object value, Object operand) {
        if (!(operand instanceof List<?> candidates) || candidates.isEmpty()) {
            return null;
        }
        boolean any = false;
        for (Object candidate : candidates) {
            Boolean equal = isPlain(candidate) ? equalTo(present, value, candidate) : null;
            if (equal == null) {
                return null;
            }
            any |= equal;
        }
        return any;
    }

    /** Equality with an integer: the field holds an integer or a decimal of that value (a double or an array: unknown). */
    private static Boolean integerEqualTo(boolean present, Object value, Object wanted) {
        if (!present) {
            return false;
        }
        if (value instanceof Decimal128) {
            return exactCompare(true, value, "$eq", wanted);
        }
        return isInteger(value) ? ((Number) value).longValue() == ((Number) wanted).longValue() : null;
    }

    private static Boolean compare(boolean present, Object value, String operator, Object operand) {
        if (!isInteger(operand)) {
            return isExactNumber(operand) ? exactCompare(present, value, operator, operand) : null;
        }
        if (value instanceof Decimal128) {
            return exactCompare(present, value, operator, operand);
        }
        if (!present) {
            return false;
        }
        if (!isInteger(value)) {
            return null;
        }
        int order = Long.compare(((Number) value).longValue(), ((Number) operand).longValue());
        return switch (operator) {
            case "$gt" -> order > 0;
            case "$gte" -> order >= 0;
            case "$lt" -> order < 0;
            default -> order <= 0;
        };
    }

    /**
     * A comparison where a Decimal128 meets an integer or another Decimal128, by exact value, as
     * MongoDB compares them (upstream converts both to doubles: {@code 100 >= 100.000000000000001}
     * held, and a guarded debit of a decimal amount could overdraw a long balance). Other types,
     * NaN and infinities: unknown.
     */
    private static Boolean exactCompare(boolean present, Object value, String operator, Object operand) {
        if (!present) {
            return false;
        }
        if (!isExactNumber(value)) {
            return null;
        }
        int order = exact(value).compareTo(exact(operand));
        return switch (operator) {
            case "$eq" -> order == 0;
            case "$gt" -> order > 0;
            case "$gte" -> order >= 0;
            case "$lt" -> order < 0;
            default -> order <= 0;
        };
    }

    /** An integer, or a finite Decimal128. */
    private static boolean isExactNumber(Object value) {
        if (value instanceof Decimal128 d) {
            String text = d.toString();
            return !text.contains("NaN") && !text.contains("Infinity");
        }
        return isInteger(value);
    }

    private static BigDecimal exact(Object number) {
        return number instanceof Decimal128 d ? d.toBigDecimal() : BigDecimal.valueOf(((Number) number).longValue());
    }

    /** {@code "field.N": {$exists: b}} on an array of plain values: whether it has an element N. */
    private static Boolean arrayPositionExists(Document document, String key, int dot, Object condition) {
        String field = key.substring(0, dot);
        String position = key.substring(dot + 1);
        if (field.isEmpty() || field.startsWith("$") || !isArrayPosition(position)
                || !(condition instanceof Document operators) || operators.size() != 1
                || !(operators.get("$exists") instanceof Boolean wanted)) {
            return null;
        }
        if (!document.containsKey(field)) {
            return !wanted;
        }
        if (!(document.get(field) instanceof List<?> list)) {
            return null;
        }
        for (Object element : list) {
            if (!isPlain(element)) {
                return null;
            }
        }
        return (list.size() > Integer.parseInt(position)) == wanted;
    }

    /** A non-negative int in ASCII digits without a leading zero (upstream reads anything else, "٣" too, as a field name). */
    private static boolean isArrayPosition(String position) {
        return !position.isEmpty() && position.length() <= 9 && position.chars().allMatch(c -> c >= '0' && c <= '9')
                && (position.length() == 1 || position.charAt(0) != '0');
    }

    /** {@code {$lt: ["$$NOW", date]}}: the server's clock is still before {@code date}. */
    private static Boolean nowBefore(Object condition) {
        if (condition instanceof Document expression && expression.size() == 1
                && expression.get("$lt") instanceof List<?> operands && operands.size() == 2
                && "$$NOW".equals(operands.get(0)) && operands.get(1) instanceof Instant deadline) {
            // the server decodes BSON dates as Instants; upstream reads $$NOW from the same clock
            return Instant.now().isBefore(deadline);
        }
        return null;
    }

    private static boolean isPlain(Object value) {
        return value instanceof String || value instanceof ObjectId || value instanceof UUID || value instanceof Boolean;
    }

    private static boolean isInteger(Object value) {
        return value instanceof Integer || value instanceof Long;
    }
}
