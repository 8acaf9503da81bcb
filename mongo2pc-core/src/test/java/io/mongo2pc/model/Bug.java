package io.mongo2pc.model;

/**
 * Deliberate protocol bugs the model can be run with. Each one removes or weakens one guard of
 * the real code; the model checker must find a counterexample for every one of them (this is what
 * shows that the model can fail), and none for the protocol as written.
 */
enum Bug {
    /** Participants: the {@code $expr: {$lt: ["$$NOW", deadline]}} fence is left out of apply/undo/release. */
    NO_DEADLINE_CHECK,
    /** Participants: the fence is {@code $lte} instead of {@code $lt}: a write still passes at the tick a takeover may happen. */
    DEADLINE_OFF_BY_ONE,
    /** TransactionStore.move/renew: the compare-and-set matches the state only, not the epoch. */
    NO_EPOCH_IN_CAS,
    /** Engine.staleBefore: recovery waits only {@code olderThan} (1 tick) instead of the transaction's own lease (2 ticks). */
    TAKEOVER_IGNORES_LEASE,
    /** TransactionStore.takeOver: the CAS checks state and epoch but not {@code lastModified <= staleBefore} (a renewal in between is ignored). */
    TAKEOVER_WITHOUT_STALENESS_RECHECK,
    /** Participants.undo: the filter does not require the transaction's marker (undoes what was never applied, or twice). */
    UNDO_WITHOUT_MARKER_CHECK,
    /** Participants.apply: the filter lacks {@code pendingTransactions: {$ne: txId}} (a repeated apply counts twice). */
    APPLY_WITHOUT_MARKER_GUARD,
    /** Engine.move: a failed CAS is never recognised as our own write whose acknowledgement was lost; the retry reports success anyway. */
    MOVE_RETRY_ASSUMES_SUCCESS
}
