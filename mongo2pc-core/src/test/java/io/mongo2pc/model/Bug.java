package io.mongo2pc.model;

/**
 * Deliberate protocol bugs the model can be run with. Each one removes or weakens one guard of
 * the real code. For every {@link #harmful} one the model checker must find a counterexample (this
 * is what shows that the model can fail); the protocol as written must have none. The others are
 * mutations the model proves harmless in its scope: the guard they remove is defence in depth,
 * because another guard (the deadline fence) already stops the same interleavings.
 */
enum Bug {
    /** Participants: the {@code $expr: {$lt: ["$$NOW", deadline]}} fence is left out of apply/undo/release. */
    NO_DEADLINE_CHECK(true),
    /** Participants: the fence is {@code $lte} instead of {@code $lt}: a write still passes at the tick a takeover may happen. */
    DEADLINE_OFF_BY_ONE(true),
    /** OwnerWrites.stamped: the deadline is the stamp plus the lease, without subtracting maxClockSkew (caught when the participants' clock runs behind). */
    NO_SKEW_MARGIN(true),
    /** TransactionStore.move/renew: the compare-and-set matches the state only, not the epoch. */
    NO_EPOCH_IN_CAS(true),
    /** Recovery.staleBefore: recovery waits only {@code olderThan} (1 tick) instead of the transaction's own lease (2 ticks). */
    TAKEOVER_IGNORES_LEASE(true),
    /** TransactionStore.takeOver: the CAS checks state and epoch but not {@code lastModified <= staleBefore} (a renewal in between is ignored). */
    TAKEOVER_WITHOUT_STALENESS_RECHECK(true),
    /** TransactionStore.takeOver: the new owner keeps the old epoch instead of epoch + 1. */
    TAKEOVER_WITHOUT_EPOCH_BUMP(true),
    /** IncrementWrites.undo: the filter does not require the transaction's marker (undoes what was never applied, or twice). */
    UNDO_WITHOUT_MARKER_CHECK(true),
    /** IncrementWrites.apply: the filter lacks {@code pendingTransactions: {$ne: txId}} (a repeated apply counts twice). */
    APPLY_WITHOUT_MARKER_GUARD(true),
    /** Recovery.recover: the stale query looks for pending and canceling only (a liveness bug: an applied transaction whose owner died is never finished). */
    RECOVERY_SKIPS_APPLIED(true),
    /** OwnerWrites.move: after a CAS miss, "the state is now the target" is taken as our own lost acknowledgement without comparing the epoch. */
    ACK_LOST_CHECK_WITHOUT_EPOCH(false),
    /** OwnerWrites.move: a CAS miss is taken as success (the owner carries on in the target state with its old deadline). */
    MOVE_RETRY_ASSUMES_SUCCESS(false);

    /** True if the model must find a counterexample. */
    final boolean harmful;

    Bug(boolean harmful) {
        this.harmful = harmful;
    }
}
