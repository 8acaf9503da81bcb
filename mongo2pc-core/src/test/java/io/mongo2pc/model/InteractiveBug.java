package io.mongo2pc.model;

/**
 * Deliberate bugs {@link InteractiveModel} can be run with, each removing or weakening one rule of
 * interactive transactions (docs/INTERACTIVE.md). For every {@link #harmful} one the checker must
 * find a counterexample; the others are mutations it proves harmless in its scope.
 */
enum InteractiveBug {
    /** A document the body only read is never checked before the commit (write skew). */
    READ_NOT_VALIDATED(true),
    /** The release of a fixed-operation transfer's increment does not add 1 to the document's version. */
    VERSION_NOT_BUMPED(true),
    /** The documents only read are checked while the attempt's writes are not all taken yet. */
    VALIDATION_BEFORE_LOCKS(true),
    /** The check of a document only read ignores another transaction's lock (only the committed version counts). */
    VALIDATION_IGNORES_LOCKS(true),
    /**
     * An optimistic take (and a check of a document only read) goes past any other transaction's
     * lock, not only a committed one's.
     */
    TAKE_OVER_HELD(true),
    /** An interactive write takes its document although increments of other transactions are on it. */
    TAKE_IGNORES_MARKERS(true),
    /**
     * A poisoned attempt: the next attempt keeps the failed attempt's nonce and does not wait out its
     * write in doubt, which then lands as the next attempt's own and commits with it.
     */
    POISONED_ATTEMPT(true),
    /**
     * With nonces of their own, the next attempt does not wait out a write in doubt of the failed one:
     * the late write leaves a lock no commit can claim, undone by whoever meets it past its deadline.
     */
    RETRY_WITHOUT_WAITING_OUT(false),
    /** A pessimistic read takes the document with F's marker on it and reads it before the marker drained (the stored value, a hold in it). */
    READ_BEFORE_DRAINED(true),
    /** A read-only attempt also requires its documents free of other transactions' locks (stricter than needed). */
    READ_ONLY_CHECKS_LOCKS(false);

    /** True if the model must find a counterexample. */
    final boolean harmful;

    InteractiveBug(boolean harmful) {
        this.harmful = harmful;
    }
}
