package io.mongo2pc;

/**
 * How a transaction ended: {@link TransactionState#DONE} with every operation applied once, or
 * {@link TransactionState#CANCELED} with none in effect and a {@code reason} a caller can act on
 * (e.g. "guard failed on default/bank.accounts/A: {balance: {$gte: 100}}"). With
 * {@link TransactionManager.Builder#finishInBackground(boolean)}, a committed transaction is
 * returned at its commit point as {@link TransactionState#APPLIED}: every operation is in effect
 * and it can only roll forward; its markers are released and it moves to {@code done} in the
 * background (or by recovery, if this process dies first). Immutable.
 */
public record TransactionOutcome(Object id, TransactionState state, String reason) {

    public TransactionOutcome {
        if (state != null && !state.isTerminal() && state != TransactionState.APPLIED) {
            throw new IllegalArgumentException("an outcome is applied, done or canceled, not " + state);
        }
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
