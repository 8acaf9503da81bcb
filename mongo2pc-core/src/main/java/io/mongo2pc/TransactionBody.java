package io.mongo2pc;

/**
 * The body of an interactive transaction ({@link TransactionManager#transact(TransactionBody)}): it
 * reads through the {@link TransactionContext}, decides, writes through it, and returns a value.
 * It may run several times (once per attempt, after a conflict), so it should do nothing outside the
 * context that must happen once. An exception it throws ends the transaction with nothing written
 * and reaches the caller of {@code transact} as thrown.
 *
 * @param <T> what the body returns ({@link TransactionResult#value()})
 */
@FunctionalInterface
public interface TransactionBody<T> {
    T run(TransactionContext ctx) throws Exception;
}
