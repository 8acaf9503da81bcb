package io.mongo2pc;

import org.bson.Document;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

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

    /** What an operation means or allows beyond its change; stored with it, so that any process reads it the same. */
    enum Flag {
        /**
         * A debit of money: a refusal by its funds check (a guard {@code {field: {$gte: x}}} of an
         * increment by {@code -x}) is {@link ReasonCode#INSUFFICIENT_FUNDS}. Without it, only a funds
         * check of the tutorial's {@code balance} field is; any other guard that does not hold is
         * {@link ReasonCode#GUARD_FAILED} (a stock count is not money). The bank's transfers and
         * payments set it.
         */
        DEBIT,
        /**
         * Its increments may change the number type or the scale of the fields they add to: an
         * integer into a double or a decimal, a decimal into more decimal places ({@code $inc} of
         * 1.5 on the integer 5). Without it such an increment is refused as bad input before anything
         * is written. The bank's transfers set it: they check amounts against each account's scale
         * themselves.
         */
        ALLOW_TYPE_CHANGE
    }

    /** Its flags (none unless given). */
    default Set<Flag> flags() {
        return Set.of();
    }

    /** True if the operation takes the document for its transaction (everything but increments). */
    default boolean exclusive() {
        return !(this instanceof Increment);
    }

    /**
     * Adds amounts to numeric fields ({@code $inc}); the undo is the opposite increment. Amounts
     * are {@code Integer}, {@code Long} or {@code Decimal128} ({@code Double} only in documents
     * written by others).
     */
    record Increment(DocumentRef document, Document increments, Document guard, Set<Flag> flags) implements Operation {
        public Increment {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(increments, "increments");
            guard = guard == null ? new Document() : guard;
            flags = flagSet(flags);
        }

        /** An increment without flags. */
        public Increment(DocumentRef document, Document increments, Document guard) {
            this(document, increments, guard, Set.of());
        }

        /** This increment with {@code more} flags too. */
        public Increment with(Flag... more) {
            return new Increment(document, increments, guard, union(flags, more));
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
    record Update(DocumentRef document, Document update, Document guard, Set<Flag> flags) implements Operation {
        public Update {
            Objects.requireNonNull(document, "document");
            Objects.requireNonNull(update, "update");
            guard = guard == null ? new Document() : guard;
            flags = flagSet(flags);
        }

        /** An update without flags. */
        public Update(DocumentRef document, Document update, Document guard) {
            this(document, update, guard, Set.of());
        }

        /** This update with {@code more} flags too. */
        public Update with(Flag... more) {
            return new Update(document, update, guard, union(flags, more));
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

    private static Set<Flag> flagSet(Set<Flag> flags) {
        return flags == null || flags.isEmpty() ? Set.of() : Set.copyOf(flags);
    }

    private static Set<Flag> union(Set<Flag> flags, Flag... more) {
        EnumSet<Flag> all = EnumSet.noneOf(Flag.class);
        all.addAll(flags);
        all.addAll(java.util.List.of(more));
        return all;
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
