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
 * @param failedOperation the operation that was refused (its index in the transaction's list and its
 *                   document); null when committed, or canceled for a reason of no one operation
 *                   (an operator, a deadline)
 */
public record TransactionOutcome(Object id, TransactionState state, String reason, ReasonCode reasonCode,
                                 FailedOperation failedOperation) {

    /** Which operation of a transaction was refused: its place in the list of operations (from 0) and its document. */
    public record FailedOperation(int index, DocumentRef document) {
        public FailedOperation {
            if (index < 0) {
                throw new IllegalArgumentException("an operation's index is 0 or more, got " + index);
            }
            java.util.Objects.requireNonNull(document, "document");
        }
    }

    public TransactionOutcome {
        if (state != null && !state.isTerminal() && state != TransactionState.APPLIED) {
            throw new IllegalArgumentException("an outcome is applied, done or canceled, not " + state);
        }
    }

    /** An outcome that names no refused operation. */
    public TransactionOutcome(Object id, TransactionState state, String reason, ReasonCode reasonCode) {
        this(id, state, reason, reasonCode, null);
    }

    /** An outcome without a reason code. */
    public TransactionOutcome(Object id, TransactionState state, String reason) {
        this(id, state, reason, null, null);
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
