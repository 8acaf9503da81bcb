package io.mongo2pc;

/**
 * The database could not be reached long enough to finish the transaction. It is durable and
 * will be finished by recovery (by this or any other process) once its lease expires; read its
 * outcome later with {@link TransactionManager#inspect(Object)}.
 */
public class OutcomeUnknownException extends TransactionException {
    public OutcomeUnknownException(String message, Object transactionId, TransactionState lastKnownState, Throwable cause) {
        super(message, transactionId, lastKnownState, cause);
    }
}
