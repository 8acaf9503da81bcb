package io.mongo2pc.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The last check of what a command says to its user: a message from a library (the driver, the
 * JSON parser, the JDK) may still carry Java's words, which mean nothing to someone who typed a
 * command. Qualified class names and exception names are dropped, Java's spelling of a duration
 * ({@code PT30S}) becomes the command line's ({@code 30s}). Stateless.
 */
final class Words {
    /**
     * "java.net.ConnectException: ", "org.bson.BsonInvalidOperationException: ", "IllegalStateException: ":
     * a qualified name under a Java package root, or an exception's simple name before its message
     * (a user's "shop.Orders" or "MyError" stays).
     */
    private static final Pattern CLASS_NAME = Pattern.compile(
            "\\b(?:java|javax|jdk|sun|com|org|io|de|net)\\.(?:[a-z][a-z0-9_]*\\.)*[A-Z]\\w*(?:\\$\\w+)*(?::\\s*)?"
                    + "|\\b[A-Z]\\w*(?:Exception|Error):\\s*");
    private static final Pattern ISO_DURATION = Pattern.compile("\\bPT[0-9HMS.]+\\b");

    private Words() { }

    static String plain(String message) {
        if (message == null || message.isBlank()) {
            return "an internal error (run again with MONGO2PC_DEBUG=1 for the details)";
        }
        String text = CLASS_NAME.matcher(message).replaceAll("");
        Matcher m = ISO_DURATION.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String replacement;
            try {
                replacement = DurationConverter.format(Duration.parse(m.group()));
            } catch (DateTimeParseException e) {
                replacement = m.group();
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        String plain = sb.toString().replaceAll("\\(\\s*\\)", "").replaceAll(" {2,}", " ").trim();
        return plain.isEmpty() ? "an internal error (run again with MONGO2PC_DEBUG=1 for the details)" : plain;
    }
}
