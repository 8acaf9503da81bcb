package io.mongo2pc;

/**
 * The root of every exception mongo2pc throws. Carries the transaction id (null if no transaction
 * was created) and the last state this process knew it to be in (null if unknown). Subclasses say
 * what the caller can do about it.
 */
public class TransactionException extends RuntimeException {
    private final transient Object transactionId;
    private final TransactionState lastKnownState;

    public TransactionException(String message, Object transactionId, TransactionState lastKnownState, Throwable cause) {
        super(message, cause);
        this.transactionId = transactionId;
        this.lastKnownState = lastKnownState;
    }

    public TransactionException(String message, Object transactionId, TransactionState lastKnownState) {
        this(message, transactionId, lastKnownState, null);
    }

    /** The transaction's id, or null if the failure came before one was written. */
    public Object transactionId() {
        return transactionId;
    }

    /** The last state this process saw, or null. */
    public TransactionState lastKnownState() {
        return lastKnownState;
    }
}
