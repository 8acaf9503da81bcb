package io.mongo2pc;

import org.bson.Document;

import java.util.Objects;

/**
 * One change to one document inside a transaction. Every operation may carry a {@code guard}: a
 * filter that must hold on the document, checked in the same atomic write that applies the
 * change; a guard that does not hold cancels the whole transaction. Immutable.
 *
 * <p>An operation's undo is computed from what is stored in the transaction document, so any
 * process can cancel it after any crash.
 */
public sealed interface Operation permits Operation.Increment {

    /** The document this operation changes. */
    DocumentRef document();

    /** The filter that must hold when the change is applied (empty for none). */
    Document guard();

    /**
     * Adds amounts to numeric fields ({@code $inc}). Increments of different transactions on the
     * same document do not block each other, as in the tutorial; the undo is the opposite
     * increment. Amounts are {@code Integer}, {@code Long}, {@code Double} (only for documents
     * written by others) or {@code Decimal128}.
     */
    record Increment(DocumentRef document, Document increments, Document guard) implements Operation {
        public Increment {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(increments, "increments");
            guard = guard == null ? new Document() : guard;
        }
    }

    /** {@code $inc} of one field, applied only while {@code guard} holds. */
    public static Increment increment(DocumentRef document, String field, Number amount, Document guard) {
        return new Increment(document, new Document(field, amount), guard);
    }
}
