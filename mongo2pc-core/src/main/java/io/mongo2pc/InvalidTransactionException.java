package io.mongo2pc;

/**
 * Bad input: refused before anything was written. Fix the input; retrying the same call fails
 * the same way.
 */
public class InvalidTransactionException extends TransactionException {
    public InvalidTransactionException(String message) {
        super(message, null, null);
    }

    /** Bad input for the transaction {@code transactionId} (an id the caller chose). */
    public InvalidTransactionException(String message, Object transactionId) {
        super(message, transactionId, null);
    }
}
