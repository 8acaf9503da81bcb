package io.mongo2pc.cli;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What Java's words look like on a screen, for tests that a command speaks in its user's words:
 * a qualified class name, an exception's name, a stack frame, Java's {@code toString} of an object
 * ({@code ReadPreferenceServerSelector{...}}, {@code Document{{...}}}, {@code Foo@1b6d3586}), a
 * class's member ({@code StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION},
 * {@code TransactionManagerBuilder.combinedRequestsInFlight}), a method call of a builder
 * ({@code commitInsert(false)}), Java's spelling of a duration ({@code PT30S}) or a cast.
 */
final class JavaLeaks {
    static final Pattern JAVA = Pattern.compile(String.join("|",
            "\\b(?:java|javax|jdk|sun|org|com|io|de|net)\\.[a-z]\\w*\\.",     // a package
            "\\b[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*\\.[A-Z]\\w+",                // a qualified class name
            "\\w*(?:Exception|Throwable)\\b|\\b[A-Z]\\w*Error\\b",             // an exception
            "^\\s*at [\\w$.]+\\(|\\.java:\\d+\\)|\\bCaused by:",               // a stack trace
            "\\b[A-Za-z]\\w*\\{",                                              // Java's toString: Name{...}
            "\\b[A-Z]\\w+@[0-9a-f]{4,}\\b",                                    // Object.toString: Name@hash
            "\\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\\.[A-Za-z_]\\w*",            // CamelCaseClass.member
            "\\b[a-z]+(?:[A-Z][a-z0-9]*)+\\([^)\\s]*\\)",                      // camelCaseMethod(arg)
            "\\bPT\\d",                                                        // Duration.toString
            "\\((?:Document|String|Integer|Long|Double|ObjectId|Boolean|ArrayList|BsonDocument)\\)",
            "readStartDocument|\\bnull pointer\\b"), Pattern.MULTILINE);

    private JavaLeaks() { }

    /** The first piece of Java in {@code text}, if any. */
    static Optional<String> find(String text) {
        Matcher m = JAVA.matcher(text);
        return m.find() ? Optional.of(m.group()) : Optional.empty();
    }
}
