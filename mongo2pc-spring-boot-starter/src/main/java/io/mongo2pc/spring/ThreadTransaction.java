package io.mongo2pc.spring;

import io.mongo2pc.TransactionContext;
import io.mongo2pc.TransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

import java.util.List;

/**
 * One run (attempt) of a Spring-managed mongo2pc transaction, bound to the thread that runs it as a
 * Spring transaction resource under its mongo2pc {@link TransactionManager}, so that
 * {@link Mongo2pcOperations} and joining methods find it. Each run starts with no rollback mark and
 * its own transaction synchronizations ({@code @TransactionalEventListener}, ...), which complete once
 * the transaction's fate is known: committed for the run that committed, rolled back for every other.
 * Not thread-safe: used by the thread that runs the method.
 */
final class ThreadTransaction {
    final TransactionContext context;
    final TransactionDefinition definition;
    /** The method that began the transaction asked for rollback ({@code setRollbackOnly}). */
    private boolean rollbackOnly;
    /** A method that joined it failed or asked for rollback: the transaction cannot commit. */
    private boolean participantRollbackOnly;

    private ThreadTransaction(TransactionContext context, TransactionDefinition definition) {
        this.context = context;
        this.definition = definition;
    }

    void setRollbackOnly() {
        rollbackOnly = true;
    }

    void setParticipantRollbackOnly() {
        participantRollbackOnly = true;
    }

    boolean isRollbackOnly() {
        return rollbackOnly || participantRollbackOnly;
    }

    boolean isParticipantRollbackOnly() {
        return participantRollbackOnly;
    }

    /** The run bound to this thread for {@code manager}, or null. */
    static ThreadTransaction current(TransactionManager manager) {
        return (ThreadTransaction) TransactionSynchronizationManager.getResource(manager);
    }

    /** Binds a new run of a transaction to this thread, with fresh synchronization (the thread's must be suspended). */
    static ThreadTransaction begin(TransactionManager manager, TransactionContext context, TransactionDefinition definition) {
        ThreadTransaction tx = new ThreadTransaction(context, definition);
        TransactionSynchronizationManager.bindResource(manager, tx);
        TransactionSynchronizationManager.initSynchronization();
        TransactionSynchronizationManager.setActualTransactionActive(true);
        TransactionSynchronizationManager.setCurrentTransactionName(Mongo2pcTransactionManager.name(definition));
        TransactionSynchronizationManager.setCurrentTransactionReadOnly(definition.isReadOnly());
        TransactionSynchronizationManager.setCurrentTransactionIsolationLevel(
                definition.getIsolationLevel() == TransactionDefinition.ISOLATION_DEFAULT ? null : definition.getIsolationLevel());
        return tx;
    }

    /**
     * The run's method returned and it is to commit: the synchronizations' {@code beforeCommit}
     * (which may still write, and whose exception cancels the run) and {@code beforeCompletion}.
     */
    void beforeCommit() {
        TransactionSynchronizationUtils.triggerBeforeCommit(definition.isReadOnly());
        TransactionSynchronizationUtils.triggerBeforeCompletion();
    }

    /** The run is not to commit: the synchronizations' {@code beforeCompletion}. */
    void beforeRollback() {
        TransactionSynchronizationUtils.triggerBeforeCompletion();
    }

    /** Unbinds this run from the thread; returns its synchronizations, to complete once its fate is known. */
    List<TransactionSynchronization> end(TransactionManager manager) {
        List<TransactionSynchronization> synchronizations = TransactionSynchronizationManager.isSynchronizationActive()
                ? TransactionSynchronizationManager.getSynchronizations() : List.of();
        TransactionSynchronizationManager.clear();
        TransactionSynchronizationManager.unbindResourceIfPossible(manager);
        return synchronizations;
    }

    /** Completes the synchronizations of a run ({@link TransactionSynchronization#STATUS_COMMITTED}, ...). */
    static void complete(List<TransactionSynchronization> synchronizations, int status) {
        if (synchronizations.isEmpty()) {
            return;
        }
        if (status == TransactionSynchronization.STATUS_COMMITTED) {
            TransactionSynchronizationUtils.invokeAfterCommit(synchronizations);
        }
        TransactionSynchronizationUtils.invokeAfterCompletion(synchronizations, status);
    }

    /**
     * What a new transaction puts aside while it runs: the thread's mongo2pc run for the same manager
     * (a {@code REQUIRES_NEW} inside another) and the thread's synchronization, of any transaction
     * manager, as Spring's own managers suspend it.
     */
    record Suspended(ThreadTransaction transaction, List<TransactionSynchronization> synchronizations, String name,
                     boolean readOnly, Integer isolationLevel, boolean actualTransactionActive) {
    }

    static Suspended suspend(TransactionManager manager) {
        ThreadTransaction tx = (ThreadTransaction) TransactionSynchronizationManager.unbindResourceIfPossible(manager);
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            return tx == null ? null : new Suspended(tx, null, null, false, null, false);
        }
        List<TransactionSynchronization> synchronizations = TransactionSynchronizationManager.getSynchronizations();
        synchronizations.forEach(TransactionSynchronization::suspend);
        Suspended suspended = new Suspended(tx, synchronizations, TransactionSynchronizationManager.getCurrentTransactionName(),
                TransactionSynchronizationManager.isCurrentTransactionReadOnly(),
                TransactionSynchronizationManager.getCurrentTransactionIsolationLevel(),
                TransactionSynchronizationManager.isActualTransactionActive());
        TransactionSynchronizationManager.clear();
        return suspended;
    }

    static void resume(TransactionManager manager, Suspended suspended) {
        if (suspended == null) {
            return;
        }
        if (suspended.transaction() != null) {
            TransactionSynchronizationManager.bindResource(manager, suspended.transaction());
        }
        if (suspended.synchronizations() != null) {
            TransactionSynchronizationManager.setActualTransactionActive(suspended.actualTransactionActive());
            TransactionSynchronizationManager.setCurrentTransactionIsolationLevel(suspended.isolationLevel());
            TransactionSynchronizationManager.setCurrentTransactionReadOnly(suspended.readOnly());
            TransactionSynchronizationManager.setCurrentTransactionName(suspended.name());
            TransactionSynchronizationManager.initSynchronization();
            for (TransactionSynchronization synchronization : suspended.synchronizations()) {
                synchronization.resume();
                TransactionSynchronizationManager.registerSynchronization(synchronization);
            }
        }
    }
}
