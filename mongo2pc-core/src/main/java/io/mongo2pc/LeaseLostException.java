package io.mongo2pc;

/**
 * This process no longer owns the transaction: its lease expired and another process took it
 * over (or canceled it). The new owner finishes it; read its outcome with
 * {@link TransactionManager#inspect(Object)}.
 */
public class LeaseLostException extends TransactionException {
    public LeaseLostException(String message, Object transactionId, TransactionState lastKnownState) {
        super(message, transactionId, lastKnownState);
    }
}
