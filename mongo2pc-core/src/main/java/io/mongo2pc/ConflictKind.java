package io.mongo2pc;

/**
 * Why an attempt of an interactive transaction lost and ran its body again
 * ({@link TransactionConflictException}, {@link TransactionMetrics#interactiveConflict}).
 */
public enum ConflictKind {
    /** A document the attempt read was changed by a transaction that committed since. */
    CHANGED,
    /** Another transaction held a document the attempt needed (an older one, or one in its commit). */
    HELD,
    /** The attempt passed its deadline (a lease after it began), or a write of it went unanswered. */
    EXPIRED
}
