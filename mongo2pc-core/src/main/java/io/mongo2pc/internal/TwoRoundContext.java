package io.mongo2pc.internal;

import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionState;

import java.util.concurrent.ThreadLocalRandom;

/**
 * What the two-round commit shares with the rest of the coordinator: settings, the transactions
 * collection, the server's clock, group commit, the owner's transitions and lease
 * ({@link OwnerWrites}), and its own participant writes, resolver and sweep. Immutable.
 */
record TwoRoundContext(TransactionManagerSettings settings, Targets targets, TransactionStore store, ServerClock clock,
                       Retrier retrier, WritesInDoubt writesInDoubt, WriteCombiner transactionWrites, OwnerWrites writes,
                       CrashPoints crashPoints, Tokens tokens, Entries entries, Resolver resolver, Sweep sweep) {

    /** Waits about {@code millis} (with jitter) before a busy document is tried again. */
    static void sleep(long millis, Object txId) {
        try {
            Thread.sleep(millis + ThreadLocalRandom.current().nextLong(millis + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while waiting for a busy document",
                    txId, TransactionState.PENDING, e);
        }
    }
}
