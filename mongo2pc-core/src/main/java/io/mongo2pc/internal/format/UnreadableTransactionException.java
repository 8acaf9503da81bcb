package io.mongo2pc.internal.format;

import io.mongo2pc.TransactionException;

/**
 * A stored transaction whose operations mongo2pc cannot read (or would refuse): nobody can drive it.
 * Public for the recovery package, as are the members they use.
 */
public final class UnreadableTransactionException extends TransactionException {
    public UnreadableTransactionException(String message, Object transactionId, Throwable cause) {
        super(message, transactionId, null, cause);
    }
}
