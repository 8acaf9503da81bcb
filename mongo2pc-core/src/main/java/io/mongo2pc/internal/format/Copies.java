package io.mongo2pc.internal.format;

import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Deep copies of documents as the driver decodes them: embedded documents and lists copied at any
 * depth, so that a copy can be changed without changing what it was copied from. Stateless.
 */
public final class Copies {
    private Copies() { }

    /** A copy of {@code doc} whose embedded documents and lists are copies too. */
    public static Document copy(Document doc) {
        return (Document) copy(doc, UnaryOperator.identity());
    }

    /** A copy of {@code value} at any depth (documents and lists), each other value passed through {@code leaf}. */
    public static Object copy(Object value, UnaryOperator<Object> leaf) {
        if (value instanceof Document d) {
            Document copy = new Document();
            d.forEach((k, v) -> copy.put(k, copy(v, leaf)));
            return copy;
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            list.forEach(v -> copy.add(copy(v, leaf)));
            return copy;
        }
        return leaf.apply(value);
    }
}
