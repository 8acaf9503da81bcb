package io.mongo2pc;

/**
 * The body of an interactive transaction ({@link TransactionManager#transact(TransactionBody)}): it
 * reads through the {@link TransactionContext}, decides, writes through it, and returns a value.
 * It may run several times (once per attempt, after a conflict), so it should do nothing outside the
 * context that must happen once. An exception it throws ends the transaction with nothing written
 * and reaches the caller of {@code transact} as thrown, if the documents it read still hold; thrown
 * on reads a commit has made stale since, it counts as a conflict and the body runs again.
 *
 * @param <T> what the body returns ({@link TransactionResult#value()})
 */
@FunctionalInterface
public interface TransactionBody<T> {
    T run(TransactionContext ctx) throws Exception;
}
