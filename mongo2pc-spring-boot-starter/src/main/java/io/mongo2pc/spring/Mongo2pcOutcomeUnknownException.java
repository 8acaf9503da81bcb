package io.mongo2pc.spring;

import io.mongo2pc.OutcomeUnknownException;
import org.springframework.transaction.TransactionSystemException;

/**
 * The database could not be reached long enough to know whether a {@code @Transactional} method's
 * transaction committed. It is durable either way and will be finished by recovery; read its outcome
 * later with {@code TransactionManager.inspect(transactionId())}. Spring's
 * {@link TransactionSystemException}; the mongo2pc {@link OutcomeUnknownException} is its cause.
 */
public class Mongo2pcOutcomeUnknownException extends TransactionSystemException {

    public Mongo2pcOutcomeUnknownException(OutcomeUnknownException cause) {
        super(cause.getMessage(), cause);
    }

    /** The mongo2pc transaction's id. */
    public Object transactionId() {
        return ((OutcomeUnknownException) getCause()).transactionId();
    }
}
