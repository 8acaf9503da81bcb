package io.mongo2pc.spring;

import io.mongo2pc.TransactionContext;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

/**
 * The {@code TransactionStatus} a {@link Mongo2pcTransactionManager} hands to a
 * {@code TransactionTemplate} callback (and to {@code @Transactional} methods through
 * {@code TransactionAspectSupport.currentTransactionStatus()}): one run of the method in a mongo2pc
 * interactive transaction, or no transaction ({@code PROPAGATION_NEVER}). {@link #setRollbackOnly()}
 * cancels the transaction when the method returns; {@link #context()} gives the mongo2pc
 * {@link TransactionContext} itself, for reads and writes by {@code DocumentRef}. Savepoints are not
 * supported. Not thread-safe.
 */
public final class Mongo2pcTransactionStatus extends AbstractTransactionStatus {
    private final ThreadTransaction transaction;
    private final boolean newTransaction;
    private final String name;
    private final boolean readOnly;

    Mongo2pcTransactionStatus(ThreadTransaction transaction, boolean newTransaction, TransactionDefinition definition) {
        this.transaction = transaction;
        this.newTransaction = newTransaction;
        this.name = Mongo2pcTransactionManager.name(definition);
        this.readOnly = definition.isReadOnly();
    }

    /** The mongo2pc context of this run: reads and writes by {@code DocumentRef}, in this transaction. */
    public TransactionContext context() {
        if (transaction == null) {
            throw new IllegalStateException("'" + name + "' runs without a transaction (PROPAGATION_NEVER): it has no mongo2pc context");
        }
        return transaction.context;
    }

    /** The mongo2pc transaction's id, the same in every run of the method; null without a transaction. */
    public Object transactionId() {
        return transaction == null ? null : transaction.context.transactionId();
    }

    /** Which run of the method this is: 1 for the first, 2 after one conflict, ...; 0 without a transaction. */
    public int attempt() {
        return transaction == null ? 0 : transaction.context.attempt();
    }

    @Override
    public boolean hasTransaction() {
        return transaction != null;
    }

    @Override
    public boolean isNewTransaction() {
        return transaction != null && newTransaction;
    }

    @Override
    public String getTransactionName() {
        return name;
    }

    @Override
    public boolean isReadOnly() {
        return readOnly;
    }

    @Override
    public boolean isGlobalRollbackOnly() {
        return transaction != null && transaction.isRollbackOnly();
    }

    @Override
    public void flush() {
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationUtils.triggerFlush();
        }
    }

    /** The method returned: a rollback it asked for becomes the transaction's (Spring's rule for participants too). */
    void methodReturned() {
        if (transaction != null && isLocalRollbackOnly()) {
            if (newTransaction) {
                transaction.setRollbackOnly();
            } else {
                transaction.setParticipantRollbackOnly();
            }
        }
        setCompleted();
    }

    /** The method threw: a participant's failure marks the whole transaction for rollback, as Spring's managers do. */
    void methodFailed() {
        if (transaction != null && !newTransaction) {
            transaction.setParticipantRollbackOnly();
        }
        setCompleted();
    }
}
