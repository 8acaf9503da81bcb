package io.mongo2pc.model;

/**
 * Deliberate bugs {@link TwoRoundModel} can be run with, each removing or weakening one rule of
 * the two-round-trip commit (docs/TWO-ROUND.md). For every {@link #harmful} one the checker must
 * find a counterexample; the others are mutations it proves harmless in its scope.
 */
enum TwoRoundBug {
    /** Today's rule: an increase takes effect at its prepare (the credit can be spent before its commit point). */
    CREDIT_AT_PREPARE(true, true),
    /** The commit compare-and-set is sent while a prepare is unanswered or in doubt (only refusals are waited for). */
    COMMIT_BEFORE_EVERY_PREPARE_ACKNOWLEDGED(true, false),
    /** A resolver tombstones a transaction without a document as soon as it meets its marker, ignoring the entry's deadline. */
    RESOLVER_BEFORE_DEADLINE(true, false),
    /** A resolver waits for the entry's deadline on the coordinator's clock but not for maxClockSkew after it. */
    RESOLVER_WITHOUT_SKEW_MARGIN(true, false),
    /** A resolver undoes the marker of a transaction without a document and writes no tombstone. */
    RESOLVER_WITHOUT_TOMBSTONE(true, false),
    /** Prepares carry no deadline ({@code $$NOW < until} left out of the filter). */
    PREPARE_WITHOUT_DEADLINE(true, false),
    /** Roll-forward ({@code $inc} + {@code $pull}) without the marker in the filter. */
    ROLL_FORWARD_WITHOUT_MARKER(true, false),
    /** A prepare whose answer was lost is sent again at once instead of after its deadline + maxClockSkew. */
    IN_DOUBT_PREPARE_RESENT_AT_ONCE(true, false),
    /** The owner cancels and undoes while a prepare of its round is still unanswered or in doubt. */
    UNDO_BEFORE_PREPARES_SETTLED(true, false),
    /** readCommitted adds nothing for a committed transaction's pending increase. */
    READ_IGNORES_COMMITTED_CREDIT(true, false),
    /**
     * A single-document read that found some transactions committed and others not takes the others
     * as not committed without reading their documents again after all the first reads: one may have
     * committed, then another committed before it was read committed, a view with the later in and
     * the earlier out (a value the account never held).
     */
    READER_WITHOUT_STATE_REREAD(true, true),
    /**
     * The code's rule after many changes of the document, with two transactions: a read returns once
     * each transaction not found committed still has its marker, the document changed or not. A
     * transaction that marks the account after its read and commits before one found committed is
     * missing from the view.
     */
    READER_STILL_HELD_ONLY(true, true),
    /** Markers of a transaction without a document are never resolved (a liveness bug). */
    NO_RESOLUTION_WITHOUT_DOCUMENT(true, false),
    /** An increment's prepare does not require the document free of another transaction's lock (exclusive set-up). */
    HOLD_IGNORES_LOCK(true, true),
    /** An exclusive take does not require the document free of other transactions' markers (exclusive set-up). */
    TAKE_IGNORES_MARKERS(true, true),
    /** The undo of an exclusive update removes its lock without restoring the before-image its change stored. */
    UNDO_WITHOUT_RESTORE(true, false),
    /**
     * The change of an exclusive update (round 1b) does not require the before-image absent (a copy
     * would overwrite it): no copy lands twice, as a prepare sent again reads the before-image back.
     */
    CHANGE_OVERWRITES_BEFORE_IMAGE(false, false),
    /**
     * The design before round 1b: the take stores the change, the release applies it after the
     * commit point; a server that refuses the change then leaves a committed transaction locked.
     */
    CHANGE_AT_RELEASE(true, false),
    /** The change of an exclusive update (round 1b) does not require its lock on the document. */
    CHANGE_WITHOUT_LOCK(false, false),
    /** Recovery rolls forward a stale pending transaction even if its document was inserted after its deadline. */
    LATE_INSERT_ROLLED_FORWARD(false, false),
    /** The owner's undo while canceling carries no deadline (only the marker in the filter). */
    OWNER_UNDO_WITHOUT_DEADLINE(false, false),

    // ---- with prune, and of the commit-insert variant (docs/COMMIT-INSERT.md) ---------------------

    /** Today's commit compare-and-set without {@code insertedAt < until}: harmless without prune, not with it. */
    COMMIT_CAS_IGNORES_LATE_INSERT(true, false, true),
    /**
     * Today's renewal without {@code insertedAt < until}: an owner whose pending document landed late
     * (after a tombstone was pruned) renews it and prepares again, after its transaction was canceled.
     */
    RENEW_IGNORES_LATE_INSERT(true, false, true),
    /**
     * Recovery rolls forward a pending document that round 1 inserted and that was not inserted late,
     * without requiring every prepare in effect: with prune, a copy of the insert still in flight
     * inserts a finished, pruned transaction again and recovery runs it a second time.
     */
    RECOVERY_ROLLS_PENDING_FORWARD(true, false, true),
    /** Prune deletes a finished document younger than a lease: harmless once recovery requires every prepare in effect. */
    PRUNE_YOUNG(false, false, true),
    /** Prune deletes a transaction document that is not finished (applied, pending). */
    PRUNE_UNFINISHED(true, false, true),
    /** The owner takes "my commit insert inserted the document" as committed, without knowing it ran before its deadline. */
    OWNER_TRUSTS_LATE_INSERT(true, false, true),
    /**
     * The owner whose commit insert was in doubt, sent again, and inserted late reports its
     * transaction canceled: the copy in doubt may have committed, finished and been pruned before.
     */
    OWNER_CANCELS_AMBIGUOUS_LATE_INSERT(true, false, true),
    /** Readers, resolvers and recovery count an applied document inserted after its deadline as committed. */
    READER_IGNORES_LATENESS(true, false, true),
    /** Nobody applies the lateness rule (owner and readers): "committed iff inserted", with prune deleting tombstones. */
    NO_LATENESS_RULE(true, false, true),
    /**
     * A reader takes a transaction it did not find committed (no document, or one that counts as not
     * committed) for one not committed without reading the account again: prune may have removed the
     * document after its transaction committed and released the marker the reader had read (and a
     * late copy of its insert may have written another since).
     */
    READER_WITHOUT_RECHECK(true, false, true),
    /** The owner cancels without a document by its own undo, without first settling every prepare of its round. */
    CANCEL_WITHOUT_DOCUMENT_BEFORE_SETTLED(true, false, true),
    /**
     * Not a bug: the commit-insert owner as the library codes it. Once round 1 is answered (each
     * prepare in effect, refused, expired or in doubt), every prepare in effect sends the commit
     * insert and anything else falls back on today's pending insert and rules (with the document's
     * deadline, inserted late or not); the owner never cancels without a document.
     */
    FALLBACK_AT_ANY_PREPARE_NOT_IN_EFFECT(false, false, true);

    /** True if the model must find a counterexample. */
    final boolean harmful;
    /** True if it takes two transactions sharing an account to show it. */
    final boolean needsTwoTransactions;
    /** True if it is a rule of prune or of the commit-insert variant: checked by {@code CommitInsertModelTest}. */
    final boolean commitInsert;

    TwoRoundBug(boolean harmful, boolean needsTwoTransactions) {
        this(harmful, needsTwoTransactions, false);
    }

    TwoRoundBug(boolean harmful, boolean needsTwoTransactions, boolean commitInsert) {
        this.harmful = harmful;
        this.needsTwoTransactions = needsTwoTransactions;
        this.commitInsert = commitInsert;
    }
}
