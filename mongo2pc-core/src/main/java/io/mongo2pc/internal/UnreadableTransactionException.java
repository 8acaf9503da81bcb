package io.mongo2pc.internal;

import io.mongo2pc.TransactionException;

/** A stored transaction whose operations mongo2pc cannot read (or would refuse): nobody can drive it. */
final class UnreadableTransactionException extends TransactionException {
    UnreadableTransactionException(String message, Object transactionId, Throwable cause) {
        super(message, transactionId, null, cause);
    }
}
