package io.mongo2pc;

/**
 * How a transaction ended: {@link TransactionState#DONE} with every operation applied once, or
 * {@link TransactionState#CANCELED} with none in effect, a {@code reason} for people (e.g. "guard
 * failed on default/bank.accounts/A: {balance: {$gte: 100}}") and a {@link ReasonCode} for programs.
 * With {@link TransactionManagerBuilder#finishInBackground(boolean)}, a committed transaction is
 * returned at its commit point as {@link TransactionState#APPLIED}: every operation is in effect
 * and it can only roll forward; its markers are released and it moves to {@code done} in the
 * background (or by recovery, if this process dies first). Immutable.
 *
 * @param reasonCode why it was canceled; null when committed, or for a reason that is none of the
 *                   codes (a transaction canceled by an application that follows the tutorial, one
 *                   stored with operations mongo2pc cannot run, or one canceled before codes existed)
 */
public record TransactionOutcome(Object id, TransactionState state, String reason, ReasonCode reasonCode) {

    public TransactionOutcome {
        if (state != null && !state.isTerminal() && state != TransactionState.APPLIED) {
            throw new IllegalArgumentException("an outcome is applied, done or canceled, not " + state);
        }
    }

    /** An outcome without a reason code. */
    public TransactionOutcome(Object id, TransactionState state, String reason) {
        this(id, state, reason, null);
    }

    /** True once every operation is in effect for good: {@code applied} or {@code done}. */
    public boolean isCommitted() {
        return state == TransactionState.APPLIED || state == TransactionState.DONE;
    }

    public boolean isDone() {
        return state == TransactionState.DONE;
    }

    public boolean isCanceled() {
        return state == TransactionState.CANCELED;
    }
}
