package io.mongo2pc;

/**
 * How a transaction ended: {@link TransactionState#DONE} with every operation applied once, or
 * {@link TransactionState#CANCELED} with none in effect and a {@code reason} a caller can act on
 * (e.g. "guard failed on default/bank.accounts/A: {balance: {$gte: 100}}"). Immutable.
 */
public record TransactionOutcome(Object id, TransactionState state, String reason) {

    public TransactionOutcome {
        if (state != null && !state.isTerminal()) {
            throw new IllegalArgumentException("an outcome is terminal, not " + state);
        }
    }

    public boolean isDone() {
        return state == TransactionState.DONE;
    }

    public boolean isCanceled() {
        return state == TransactionState.CANCELED;
    }
}
