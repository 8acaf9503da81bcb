package io.mongo2pc;

import org.bson.Document;

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

    /** How a refused value is shown in a message: its text (JSON for a document) and its type. */
    public static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        String text = value instanceof Document d ? d.toJson() : String.valueOf(value);
        return text + " (" + value.getClass().getSimpleName() + ")";
    }
}
