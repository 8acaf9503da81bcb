package io.mongo2pc.spring;

import io.micrometer.observation.ObservationRegistry;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionConflictException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.InvalidTimeoutException;
import org.springframework.transaction.NestedTransactionNotSupportedException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.TransactionUsageException;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.interceptor.DefaultTransactionAttribute;
import org.springframework.transaction.support.CallbackPreferringPlatformTransactionManager;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionSynchronization;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Spring's transaction manager for mongo2pc: a {@code TransactionTemplate} callback or a
 * {@code @Transactional(transactionManager = "mongo2pcTransactionManager")} method runs as one
 * mongo2pc interactive transaction ({@link TransactionManager#transact}). Its reads and writes go
 * through {@link Mongo2pcOperations} (or {@link Mongo2pcTransactionStatus#context()}); when it
 * returns they commit together, serializable on the documents it touched, and on a conflict the
 * whole method runs again, until the timeout ({@code @Transactional(timeout = seconds)}, else
 * {@link #defaultTimeout()}).
 *
 * <ul>
 *   <li>Rollback as Spring's managers: an exception the rules roll back for (by default any runtime
 *       exception or error) cancels the transaction and reaches the caller as thrown;
 *       {@code setRollbackOnly()} cancels it and the method's value is returned; a checked
 *       exception the rules commit for commits, then reaches the caller.</li>
 *   <li>Propagation: {@code REQUIRED} (joins the thread's mongo2pc transaction, else begins one),
 *       {@code REQUIRES_NEW} (puts the thread's aside and begins one that commits on its own),
 *       {@code MANDATORY}, {@code NEVER}. {@code SUPPORTS}, {@code NOT_SUPPORTED} and
 *       {@code NESTED} are refused at the call, before the method runs. A joined method that fails
 *       or asks for rollback cancels the whole transaction: the method that began it gets
 *       {@link UnexpectedRollbackException} if it returns normally. Every isolation level is
 *       accepted (mongo2pc is serializable on what it touches); {@code readOnly} is a hint.</li>
 *   <li>Ends: conflicts past the timeout throw {@link Mongo2pcConflictException} (Spring's
 *       {@code ConcurrencyFailureException}); an outcome the database could not tell,
 *       {@link Mongo2pcOutcomeUnknownException} (a {@code TransactionSystemException}); a write the
 *       database refused at commit (a unique index), {@link Mongo2pcCanceledException}.</li>
 *   <li>Transaction synchronizations ({@code @TransactionalEventListener}, ...) registered in a run
 *       complete after it: committed for the run that committed, rolled back for every other.</li>
 * </ul>
 * Only the callback form is offered: {@link #getTransaction}, {@link #commit} and {@link #rollback}
 * throw. Thread-safe: each thread runs its own transactions.
 */
public class Mongo2pcTransactionManager implements CallbackPreferringPlatformTransactionManager {
    private final TransactionManager manager;
    private final Duration defaultTimeout;
    private final TransactionSpans spans;

    /** A manager over {@code manager}, with the default timeout of {@link TransactionOptions} and no observations. */
    public Mongo2pcTransactionManager(TransactionManager manager) {
        this(manager, TransactionOptions.DEFAULT_TIMEOUT, ObservationRegistry.NOOP);
    }

    /**
     * A manager over {@code manager}: methods that give no timeout of their own run again after
     * conflicts for at most {@code defaultTimeout}; transactions and their runs are observed in
     * {@code observations}.
     */
    public Mongo2pcTransactionManager(TransactionManager manager, Duration defaultTimeout, ObservationRegistry observations) {
        this.manager = Objects.requireNonNull(manager, "manager");
        this.defaultTimeout = TransactionOptions.builder().timeout(defaultTimeout).build().timeout();
        this.spans = new TransactionSpans(Objects.requireNonNull(observations, "observations"));
    }

    /** The mongo2pc manager the transactions run on. */
    public TransactionManager manager() {
        return manager;
    }

    /** How long a method with no timeout of its own runs again after conflicts. */
    public Duration defaultTimeout() {
        return defaultTimeout;
    }

    @Override
    public <T> T execute(TransactionDefinition definition, TransactionCallback<T> callback) {
        TransactionDefinition def = definition == null ? TransactionDefinition.withDefaults() : definition;
        ThreadTransaction existing = ThreadTransaction.current(manager);
        switch (def.getPropagationBehavior()) {
            case TransactionDefinition.PROPAGATION_REQUIRED:
                return existing != null ? join(existing, def, callback) : begin(def, callback);
            case TransactionDefinition.PROPAGATION_MANDATORY:
                if (existing == null) {
                    throw new IllegalTransactionStateException("'" + name(def) + "' needs a mongo2pc transaction"
                            + " (PROPAGATION_MANDATORY) and the thread runs none");
                }
                return join(existing, def, callback);
            case TransactionDefinition.PROPAGATION_REQUIRES_NEW:
                return begin(def, callback);
            case TransactionDefinition.PROPAGATION_NEVER:
                if (existing != null) {
                    throw new IllegalTransactionStateException("'" + name(def) + "' must run outside a transaction"
                            + " (PROPAGATION_NEVER) and the thread runs mongo2pc transaction " + existing.context.transactionId());
                }
                return withoutTransaction(def, callback);
            case TransactionDefinition.PROPAGATION_NESTED:
                throw new NestedTransactionNotSupportedException("'" + name(def) + "' asks for PROPAGATION_NESTED, which"
                        + " mongo2pc does not support (no savepoints): use REQUIRED, REQUIRES_NEW, MANDATORY or NEVER");
            default:
                throw new TransactionUsageException("'" + name(def) + "' asks for " + propagation(def.getPropagationBehavior())
                        + ", which mongo2pc does not support: use REQUIRED, REQUIRES_NEW, MANDATORY or NEVER");
        }
    }

    /** A new mongo2pc transaction: the thread's transaction and synchronization put aside until it ends. */
    private <T> T begin(TransactionDefinition def, TransactionCallback<T> callback) {
        TransactionOptions options = options(def);
        ThreadTransaction.Suspended suspended = ThreadTransaction.suspend(manager);
        try {
            return new Runs<>(def, callback).transact(options);
        } finally {
            ThreadTransaction.resume(manager, suspended);
        }
    }

    private <T> T join(ThreadTransaction existing, TransactionDefinition def, TransactionCallback<T> callback) {
        Mongo2pcTransactionStatus status = new Mongo2pcTransactionStatus(existing, false, def);
        T value;
        try {
            value = callback.doInTransaction(status);
        } catch (RuntimeException | Error e) {
            status.methodFailed();
            throw e;
        }
        status.methodReturned();
        return value;
    }

    private <T> T withoutTransaction(TransactionDefinition def, TransactionCallback<T> callback) {
        Mongo2pcTransactionStatus status = new Mongo2pcTransactionStatus(null, true, def);
        try {
            return callback.doInTransaction(status);
        } finally {
            status.setCompleted();
        }
    }

    private TransactionOptions options(TransactionDefinition def) {
        int seconds = def.getTimeout();
        if (seconds == TransactionDefinition.TIMEOUT_DEFAULT) {
            return TransactionOptions.builder().timeout(defaultTimeout).build();
        }
        if (seconds <= 0) {
            throw new InvalidTimeoutException("'" + name(def) + "' has timeout " + seconds + "s: mongo2pc needs a positive"
                    + " number of seconds (how long the method may run again after conflicts)", seconds);
        }
        return TransactionOptions.builder().timeout(Duration.ofSeconds(seconds)).build();
    }

    /**
     * The runs of one new transaction: each binds itself to the thread, runs the method, and leaves
     * its synchronizations to be completed once the next run begins (it lost) or the transaction ends.
     */
    private final class Runs<T> {
        private final TransactionDefinition def;
        private final TransactionCallback<T> callback;
        private final TransactionSpans.Traced traced;
        private List<TransactionSynchronization> lastRun = List.of();
        private Throwable thrownByMethod;
        /** The id of the transaction the runs are attempts of (known once the first run began). */
        private Object transactionId;
        private int runs;

        Runs(TransactionDefinition def, TransactionCallback<T> callback) {
            this.def = def;
            this.callback = callback;
            this.traced = spans.start(name(def));
        }

        T transact(TransactionOptions options) {
            TransactionResult<T> result;
            try {
                result = manager.transact(options, ctx -> run(ctx.attempt(), ThreadTransaction.begin(manager, ctx, def)));
            } catch (RollbackRequested requested) {
                end(TransactionSynchronization.STATUS_ROLLED_BACK, "rolled-back", null);
                if (requested.byParticipant) {
                    throw new UnexpectedRollbackException("transaction " + requested.transactionId + " of '" + name(def)
                            + "' was rolled back: a method that joined it failed or asked for rollback");
                }
                @SuppressWarnings("unchecked")
                T value = (T) requested.value;
                return value;
            } catch (TransactionConflictException e) {
                if (e == thrownByMethod) {
                    throw rolledBack(e);
                }
                end(TransactionSynchronization.STATUS_ROLLED_BACK, "conflict", e);
                throw new Mongo2pcConflictException(e);
            } catch (OutcomeUnknownException e) {
                // Thrown through the method by a transaction of its own: as thrown. Through it by this
                // transaction's own read (the database out of reach): this transaction's outcome.
                if (e == thrownByMethod && !Objects.equals(e.transactionId(), transactionId)) {
                    throw rolledBack(e);
                }
                end(TransactionSynchronization.STATUS_UNKNOWN, "unknown", e);
                throw new Mongo2pcOutcomeUnknownException(e);
            } catch (Throwable e) { // the method's exception (checked ones too, rethrown as thrown), or the protocol's
                end(TransactionSynchronization.STATUS_ROLLED_BACK, e == thrownByMethod ? "rolled-back" : "failed", e);
                throw Mongo2pcTransactionManager.<RuntimeException>sneaky(e);
            }
            if (!result.outcome().isCommitted()) {
                end(TransactionSynchronization.STATUS_ROLLED_BACK, "canceled", null);
                throw new Mongo2pcCanceledException(result.outcome());
            }
            end(TransactionSynchronization.STATUS_COMMITTED, "committed", null);
            return result.value();
        }

        /** One run of the method, bound to the thread as {@code tx}. */
        private T run(int attempt, ThreadTransaction tx) {
            ThreadTransaction.complete(lastRun, TransactionSynchronization.STATUS_ROLLED_BACK); // the run before lost
            lastRun = List.of();
            thrownByMethod = null;
            runs = attempt;
            transactionId = tx.context.transactionId();
            traced.attempt(attempt, transactionId);
            Mongo2pcTransactionStatus status = new Mongo2pcTransactionStatus(tx, true, def);
            try {
                T value = callback.doInTransaction(status);
                status.methodReturned();
                if (tx.isRollbackOnly()) {
                    tx.beforeRollback();
                    throw new RollbackRequested(value, tx.isParticipantRollbackOnly(), tx.context.transactionId());
                }
                tx.beforeCommit();
                return value;
            } catch (RollbackRequested requested) {
                throw requested;
            } catch (Throwable e) {
                status.setCompleted();
                thrownByMethod = e;
                tx.beforeRollback();
                throw e;
            } finally {
                lastRun = tx.end(manager);
            }
        }

        /** The method threw {@code e} (a mongo2pc exception of a transaction of its own): rethrown as thrown. */
        private RuntimeException rolledBack(RuntimeException e) {
            end(TransactionSynchronization.STATUS_ROLLED_BACK, "rolled-back", e);
            return e;
        }

        private void end(int status, String outcome, Throwable error) {
            try {
                ThreadTransaction.complete(lastRun, status);
            } finally {
                lastRun = List.of();
                traced.end(outcome, error, runs);
            }
        }
    }

    /** Thrown out of a run whose transaction is to roll back although its method returned: carries the value. */
    private static final class RollbackRequested extends RuntimeException {
        final transient Object value;
        final boolean byParticipant;
        final transient Object transactionId;

        RollbackRequested(Object value, boolean byParticipant, Object transactionId) {
            super("rollback requested", null, false, false);
            this.value = value;
            this.byParticipant = byParticipant;
            this.transactionId = transactionId;
        }
    }

    /** Throws a checked exception of the method without declaring it: it reaches the caller as thrown. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }

    @Override
    public TransactionStatus getTransaction(TransactionDefinition definition) {
        throw callbackOnly();
    }

    @Override
    public void commit(TransactionStatus status) {
        throw callbackOnly();
    }

    @Override
    public void rollback(TransactionStatus status) {
        throw callbackOnly();
    }

    private static UnsupportedOperationException callbackOnly() {
        return new UnsupportedOperationException("mongo2pcTransactionManager runs a transaction around a method, which it"
                + " may run again after a conflict: use @Transactional or TransactionTemplate, not getTransaction, commit"
                + " and rollback");
    }

    /**
     * The transaction's name: the definition's, or the {@code @Transactional} method's (Spring hands a
     * callback-preferring manager the method's attribute, which names it only as its descriptor).
     */
    static String name(TransactionDefinition def) {
        if (def.getName() != null) {
            return def.getName();
        }
        if (def instanceof DefaultTransactionAttribute attribute && attribute.getDescriptor() != null) {
            return attribute.getDescriptor();
        }
        return "transaction";
    }

    private static String propagation(int behavior) {
        return switch (behavior) {
            case TransactionDefinition.PROPAGATION_SUPPORTS -> "PROPAGATION_SUPPORTS";
            case TransactionDefinition.PROPAGATION_NOT_SUPPORTED -> "PROPAGATION_NOT_SUPPORTED";
            default -> "propagation " + behavior;
        };
    }
}
