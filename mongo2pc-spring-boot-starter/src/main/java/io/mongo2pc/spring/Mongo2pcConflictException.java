package io.mongo2pc.spring;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionConflictException;
import org.springframework.dao.ConcurrencyFailureException;

/**
 * A {@code @Transactional} method or {@code TransactionTemplate} callback lost a conflict in every
 * run until its timeout ({@code @Transactional(timeout = ...)}, else {@code mongo2pc.transactional.timeout}):
 * nothing of it is in effect. Spring's {@link ConcurrencyFailureException}, so code that retries on
 * it (or maps it to an HTTP 409) keeps working; the mongo2pc exception is its cause. Carries the
 * transaction's id, how many times the method ran, and the last conflict.
 */
public class Mongo2pcConflictException extends ConcurrencyFailureException {

    public Mongo2pcConflictException(TransactionConflictException cause) {
        super(cause.getMessage(), cause);
    }

    /** The mongo2pc exception: what it says, said by the core. */
    public TransactionConflictException conflict() {
        return (TransactionConflictException) getCause();
    }

    /** The mongo2pc transaction's id (the same in every run of the method). */
    public Object transactionId() {
        return conflict().transactionId();
    }

    /** How many times the method ran. */
    public int attempts() {
        return conflict().attempts();
    }

    /** Why the last run lost. */
    public ConflictKind conflictKind() {
        return conflict().conflictKind();
    }

    /** The document of the last conflict, or null if it concerned no one document. */
    public DocumentRef conflictDocument() {
        return conflict().conflictDocument();
    }

    /** The transaction that held that document, or null if not known. */
    public Object conflictingTransaction() {
        return conflict().conflictingTransaction();
    }
}
