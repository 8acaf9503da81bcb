package io.mongo2pc;

import org.bson.Document;

import java.util.Objects;

/**
 * One change to one document inside a transaction. Every operation may carry a {@code guard}: a
 * filter that must hold on the document, checked in the same atomic write that applies the
 * change; a guard that does not hold, a missing document (update, delete, increment) or an
 * existing one (insert) cancels the whole transaction. Immutable.
 *
 * <p>{@link Increment}s of different transactions on one document do not block each other (the
 * tutorial's behaviour); {@link Insert}, {@link Update} and {@link Delete} take the document for
 * their transaction until it ends, and conflict with every other transaction on it. Everything
 * needed to undo an operation is durable before the operation is applied: the opposite increment
 * is computed from the stored operation, and the before-image of an update is stored on the
 * document in the same write that changes it.
 */
public sealed interface Operation permits Operation.Increment, Operation.Insert, Operation.Update, Operation.Delete {

    /** The document this operation changes. */
    DocumentRef document();

    /** The filter that must hold when the change is applied (empty for none). */
    Document guard();

    /** True if the operation takes the document for its transaction (everything but increments). */
    default boolean exclusive() {
        return !(this instanceof Increment);
    }

    /**
     * Adds amounts to numeric fields ({@code $inc}); the undo is the opposite increment. Amounts
     * are {@code Integer}, {@code Long} or {@code Decimal128} ({@code Double} only in documents
     * written by others).
     */
    record Increment(DocumentRef document, Document increments, Document guard) implements Operation {
        public Increment {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(increments, "increments");
            guard = guard == null ? new Document() : guard;
        }
    }

    /** Inserts {@code content} with {@code _id} = the reference's id; canceled if the id exists. */
    record Insert(DocumentRef document, Document content) implements Operation {
        public Insert {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(content, "content");
        }

        @Override
        public Document guard() {
            return new Document();
        }
    }

    /**
     * Changes a document with update operators ({@code {$set: ..., $inc: ...}}) or replaces it
     * (a document without operators); its before-image is kept for the undo.
     */
    record Update(DocumentRef document, Document update, Document guard) implements Operation {
        public Update {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(update, "update");
            guard = guard == null ? new Document() : guard;
        }

        /** True for a replacement document, false for update operators. */
        public boolean isReplacement() {
            return update.keySet().stream().noneMatch(k -> k.startsWith("$"));
        }
    }

    /** Deletes a document; it stays (taken, unchanged) until the transaction commits. */
    record Delete(DocumentRef document, Document guard) implements Operation {
        public Delete {
            Objects.requireNonNull(document, "document");
            guard = guard == null ? new Document() : guard;
        }
    }

    /** {@code $inc} of one field, applied only while {@code guard} holds. */
    static Increment increment(DocumentRef document, String field, Number amount, Document guard) {
        return new Increment(document, new Document(field, amount), guard);
    }

    static Insert insert(DocumentRef document, Document content) {
        return new Insert(document, content);
    }

    static Update update(DocumentRef document, Document update, Document guard) {
        return new Update(document, update, guard);
    }

    static Delete delete(DocumentRef document, Document guard) {
        return new Delete(document, guard);
    }
}
