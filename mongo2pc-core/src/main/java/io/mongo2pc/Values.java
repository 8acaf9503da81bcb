package io.mongo2pc;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * Values in messages, in JSON's and BSON's words (never a Java class name or Java's toString): how
 * mongo2pc names a refused value, for callers that explain bad input the same way. Stateless.
 */
public final class Values {
    private Values() { }

    /** A value as a user wrote it, with its kind in JSON's and BSON's words: {@code {"$gt": ""} (an object)}. */
    public static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        return text(value) + " (" + kind(value) + ")";
    }

    /** A value as JSON shows it (an object or a list as JSON, an ObjectId as its hex digits), for messages. */
    public static String text(Object value) {
        if (value instanceof Document d) {
            return d.toJson();
        }
        if (value instanceof List<?> list) {
            String json = new Document("v", list).toJson();
            return json.substring(json.indexOf(':') + 1, json.length() - 1).trim();
        }
        return String.valueOf(value);
    }

    /**
     * A value as JSON shows it, numbers in plain decimal ({@code 0.000001} and {@code 10.00}, never
     * {@code 1E-6} or {@code {"$numberDecimal": "10.00"}}), text in quotes: for messages that show
     * stored values and guards.
     */
    public static String plain(Object value) {
        if (value instanceof Number n) {
            return Numbers.isFinite(n) ? Numbers.shown(n).toPlainString() : String.valueOf(n);
        }
        if (value instanceof String || value instanceof Document || value instanceof List<?> || value instanceof Map<?, ?>) {
            String json = new Document("v", value).toJson(PLAIN);
            return json.substring(json.indexOf(':') + 1, json.length() - 1).trim();
        }
        return text(value);
    }

    private static final JsonWriterSettings PLAIN = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .decimal128Converter((d, writer) -> {
                if (Numbers.isFinite(d)) {
                    writer.writeNumber(Numbers.exact(d).toPlainString());
                } else {
                    writer.writeString(d.toString());
                }
            })
            .doubleConverter((d, writer) -> {
                if (Numbers.isFinite(d)) {
                    writer.writeNumber(Numbers.shown(d).toPlainString());
                } else {
                    writer.writeString(d.toString());
                }
            })
            .build();

    /** The kind of a value in JSON's and BSON's words, never a Java class name. */
    public static String kind(Object value) {
        if (value instanceof Document || value instanceof Map<?, ?>) {
            return "an object";
        }
        if (value instanceof List<?>) {
            return "a list";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (value instanceof Integer || value instanceof Long) {
            return "an integer";
        }
        if (value instanceof Decimal128) {
            return "a decimal";
        }
        if (value instanceof Double || value instanceof Float) {
            return "a double";
        }
        if (value instanceof ObjectId) {
            return "an ObjectId";
        }
        if (value instanceof Date) {
            return "a date";
        }
        return value == null ? "null" : "a value of another type";
    }
}
