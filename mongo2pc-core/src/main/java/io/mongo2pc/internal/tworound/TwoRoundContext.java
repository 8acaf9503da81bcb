package io.mongo2pc.internal.tworound;

import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.Tokens;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.tutorial.OwnerWrites;
import io.mongo2pc.internal.tutorial.WritesInDoubt;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.internal.wire.WriteCombiner;

/**
 * What the two-round commit shares with the rest of the coordinator: settings, the transactions
 * collection, the server's clock, group commit, the owner's transitions and lease
 * ({@link OwnerWrites}), and its own participant writes, resolver and sweep. Immutable.
 * Public for the interactive package and Engine, as are the members they use.
 */
public record TwoRoundContext(TransactionManagerSettings settings, Targets targets, TransactionStore store, ServerClock clock,
                       Retrier retrier, WritesInDoubt writesInDoubt, WriteCombiner transactionWrites, OwnerWrites writes,
                       CrashPoints crashPoints, Tokens tokens, Entries entries, Resolver resolver, Sweep sweep) {
}
