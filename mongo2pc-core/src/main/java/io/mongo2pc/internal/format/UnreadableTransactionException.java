package io.mongo2pc.internal.format;

import io.mongo2pc.TransactionException;

/** A stored transaction whose operations mongo2pc cannot read (or would refuse): nobody can drive it. */
public final class UnreadableTransactionException extends TransactionException {
    public UnreadableTransactionException(String message, Object transactionId, Throwable cause) {
        super(message, transactionId, null, cause);
    }
}
