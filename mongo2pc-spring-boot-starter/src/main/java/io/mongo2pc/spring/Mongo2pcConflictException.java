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
    private final transient Object transactionId;
    private final int attempts;
    private final ConflictKind conflictKind;
    private final transient DocumentRef conflictDocument;
    private final transient Object conflictingTransaction;

    public Mongo2pcConflictException(TransactionConflictException cause) {
        super(cause.getMessage(), cause);
        this.transactionId = cause.transactionId();
        this.attempts = cause.attempts();
        this.conflictKind = cause.conflictKind();
        this.conflictDocument = cause.conflictDocument();
        this.conflictingTransaction = cause.conflictingTransaction();
    }

    /** The mongo2pc transaction's id (the same in every run of the method). */
    public Object transactionId() {
        return transactionId;
    }

    /** How many times the method ran. */
    public int attempts() {
        return attempts;
    }

    /** Why the last run lost. */
    public ConflictKind conflictKind() {
        return conflictKind;
    }

    /** The document of the last conflict, or null if it concerned no one document. */
    public DocumentRef conflictDocument() {
        return conflictDocument;
    }

    /** The transaction that held that document, or null if not known. */
    public Object conflictingTransaction() {
        return conflictingTransaction;
    }
}
