package io.mongo2pc.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What is wrong with a JSON text, in the words of someone who wrote it: the messages of Jackson
 * (strict JSON) and of the BSON library (MongoDB's extended JSON types) name their own classes and
 * settings ({@code StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION}, {@code java.lang.Long},
 * {@code BEGIN_OBJECT}); these say the same in plain words, with the line and column. Stateless.
 */
final class JsonErrors {
    private static final Pattern SOURCE = Pattern.compile("\\[Source: [^\\]]*?; line: (\\d+), column: (\\d+)\\]");
    private static final Pattern END = Pattern.compile("Unexpected end-of-input: expected close marker for (Object|Array) "
            + "\\(start marker at line (\\d+), column (\\d+)\\)");
    private static final Pattern CLOSE = Pattern.compile("Unexpected close marker '(.)': expected '(.)' \\(for (Object|Array) "
            + "starting at line (\\d+), column (\\d+)\\)");
    private static final Pattern LIMIT = Pattern.compile("(Document nesting depth|Number value length|String value length)"
            + " \\((\\d+)\\) exceeds the maximum allowed \\((\\d+)[^)]*\\)");
    private static final Pattern CONVERTING = Pattern.compile("Exception converting value '(.*)' to type (\\S+)");
    private static final Pattern TOKEN = Pattern.compile("token type '(\\w+)'");
    private static final Map<String, String> TYPES = Map.of(
            "org.bson.types.Decimal128", "a decimal number (at most 34 digits, exponent -6143 to 6144)",
            "java.lang.Long", "a whole number from -9223372036854775808 to 9223372036854775807",
            "java.lang.Integer", "a whole number from -2147483648 to 2147483647",
            "java.lang.Double", "a number (or \"Infinity\", \"-Infinity\", \"NaN\")",
            "java.lang.String", "a string");
    private static final Map<String, String> TOKENS = Map.of("BEGIN_OBJECT", "an object {", "END_OBJECT", "the end of an object }",
            "BEGIN_ARRAY", "an array [", "END_ARRAY", "the end of an array ]", "STRING", "a string", "COLON", "':'",
            "COMMA", "','", "INT32", "a whole number", "INT64", "a whole number", "DOUBLE", "a number");

    private JsonErrors() { }

    /** Jackson's complaint about strict JSON, with where it is in the text. */
    static String of(JsonProcessingException e) {
        String said = e.getOriginalMessage() == null ? "cannot be read" : e.getOriginalMessage();
        String text = SOURCE.matcher(said).replaceAll("line $1, column $2");
        Matcher m = END.matcher(text);
        if (m.find()) {
            text = "the text ends before the " + kind(m.group(1)) + " opened at line " + m.group(2) + ", column "
                    + m.group(3) + " is closed";
        } else if ((m = CLOSE.matcher(text)).find()) {
            text = "'" + m.group(1) + "' where the " + kind(m.group(3)) + " opened at line " + m.group(4) + ", column "
                    + m.group(5) + " needs '" + m.group(2) + "'";
        } else if ((m = LIMIT.matcher(text)).find()) {
            text = switch (m.group(1)) {
                case "Document nesting depth" -> "objects and arrays nested " + m.group(2) + " deep, more than the "
                        + m.group(3) + " allowed";
                case "Number value length" -> "a number of " + m.group(2) + " digits, more than the " + m.group(3) + " allowed";
                default -> "a string of " + m.group(2) + " characters, more than the " + m.group(3) + " allowed";
            };
        }
        JsonLocation at = e.getLocation();
        String where = at == null || at.getLineNr() < 1 ? "" : " (at line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
        return Words.plain(text.replaceAll("\\s*\\(?`[^`]*`[^)]*\\)?", "") + where);
    }

    private static String kind(String jackson) {
        return jackson.equals("Object") ? "object" : "array";
    }

    /** The BSON library's complaint about MongoDB's extended JSON in {@code json}. */
    static String ofExtended(String message, String json) {
        String said = message == null ? "" : message;
        Matcher m = CONVERTING.matcher(said);
        if (m.find()) {
            String value = m.group(1);
            String type = TYPES.getOrDefault(m.group(2), "a value of its type");
            Matcher key = Pattern.compile("\"(\\$\\w+)\"\\s*:\\s*\"" + Pattern.quote(value) + "\"").matcher(json);
            return (key.find() ? "{\"" + key.group(1) + "\": \"" + value + "\"}: " : "") + "'" + value + "' is not " + type;
        }
        if (said.contains("hexString has 24 characters") || said.contains("invalid hexadecimal")) {
            return "an {\"$oid\": ...} is 24 hexadecimal digits";
        }
        m = TOKEN.matcher(said);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(TOKENS.getOrDefault(m.group(1), m.group(1).toLowerCase(java.util.Locale.ROOT))));
        }
        m.appendTail(sb);
        return Words.plain(sb.toString().replace("JSON reader expected", "expected"));
    }
}
