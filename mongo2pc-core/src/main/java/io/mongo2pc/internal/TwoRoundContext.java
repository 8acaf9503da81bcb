package io.mongo2pc.internal;

import io.mongo2pc.TransactionManagerSettings;

/**
 * What the two-round commit shares with the rest of the coordinator: settings, the transactions
 * collection, the server's clock, group commit, the owner's transitions and lease
 * ({@link OwnerWrites}), and its own participant writes, resolver and sweep. Immutable.
 */
record TwoRoundContext(TransactionManagerSettings settings, Targets targets, TransactionStore store, ServerClock clock,
                       Retrier retrier, WritesInDoubt writesInDoubt, WriteCombiner transactionWrites, OwnerWrites writes,
                       CrashPoints crashPoints, Tokens tokens, Entries entries, Resolver resolver, Sweep sweep) {
}
