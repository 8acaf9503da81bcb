package io.mongo2pc;

import java.time.Instant;

/**
 * What {@link TransactionManager#cancel} did. Immutable.
 *
 * @param kind           what happened
 * @param id             the transaction's id
 * @param state          its state now (null when not found)
 * @param reason         its stored reason (for {@code CANCELED} and {@code ALREADY_CANCELED}), or why not
 * @param reasonCode     its stored reason code, if any
 * @param leaseEnds      for {@code OWNER_ALIVE}: when its owner's lease runs out (server time); then
 *                       cancel again, or let it finish
 */
public record CancelResult(Kind kind, Object id, TransactionState state, String reason, ReasonCode reasonCode,
                           Instant leaseEnds) {

    /** What {@code cancel} found and did. */
    public enum Kind {
        /** Canceled by this call: nothing of it is in effect. */
        CANCELED,
        /** It was canceled before (by anyone): nothing of it is in effect. */
        ALREADY_CANCELED,
        /**
         * Committed, not canceled: it was past its commit point, or every operation was applied, so
         * this call rolled it forward (undoing a credit others may have spent could overdraw).
         */
        ROLLED_FORWARD,
        /** A live owner holds it until {@code leaseEnds}; nothing was changed. */
        OWNER_ALIVE,
        /** No transaction with this id. */
        NOT_FOUND
    }

    /** True if nothing of the transaction is in effect: {@code CANCELED} or {@code ALREADY_CANCELED}. */
    public boolean isCanceled() {
        return kind == Kind.CANCELED || kind == Kind.ALREADY_CANCELED;
    }
}
