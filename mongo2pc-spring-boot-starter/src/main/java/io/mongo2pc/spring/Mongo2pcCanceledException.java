package io.mongo2pc.spring;

import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionOutcome;
import org.springframework.transaction.UnexpectedRollbackException;

/**
 * A {@code @Transactional} method returned, but the database refused one of its writes when it
 * committed (a unique index, a schema validator): nothing of it is in effect. Carries the outcome,
 * with the database's reason.
 */
public class Mongo2pcCanceledException extends UnexpectedRollbackException {
    private final transient TransactionOutcome outcome;

    public Mongo2pcCanceledException(TransactionOutcome outcome) {
        super("transaction " + outcome.id() + " was canceled when it committed: " + outcome.reason());
        this.outcome = outcome;
    }

    /** The mongo2pc transaction's id. */
    public Object transactionId() {
        return outcome.id();
    }

    /** Why it was canceled ({@link ReasonCode#GUARD_FAILED} for a write the database refused). */
    public ReasonCode reasonCode() {
        return outcome.reasonCode();
    }

    public TransactionOutcome outcome() {
        return outcome;
    }
}
