package io.mongo2pc;

/**
 * How an interactive transaction ended ({@link TransactionManager#transact(TransactionBody)}).
 * Immutable.
 *
 * @param value    what the body returned in the attempt that ended it (for a caller's id run again,
 *                 the first run's value as stored, or null if its codec registry could not store it)
 * @param outcome  that attempt's outcome: committed ({@code applied}, or {@code done}; a body that wrote
 *                 nothing is {@code done} without a transaction document), or {@code canceled} when
 *                 the database refused a write (a unique index, a validator: {@link ReasonCode#GUARD_FAILED})
 * @param attempts how many times the body ran
 * @param <T>      the body's value
 */
public record TransactionResult<T>(T value, TransactionOutcome outcome, int attempts) {
}
