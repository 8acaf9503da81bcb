package io.mongo2pc.internal.admin;

import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * An operator's queries of the transactions collection: counts, recovery lag, the server's time. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class AdminQueries {
    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;

    public AdminQueries(TransactionStore store, ServerClock clock, Retrier retrier) {
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
    }

    /**
     * How many transactions are in each state, as they count: a commit written after its deadline
     * ({@link LateCommit}) counts as canceled, not as the applied or done it stores. The stubs of
     * pruned transactions ({@link Pruning}) are no transactions any more and are not counted.
     */
    public Map<TransactionState, Long> counts() {
        Map<TransactionState, Long> counts = new EnumMap<>(TransactionState.class);
        for (TransactionState state : TransactionState.values()) {
            counts.put(state, retrier.call("count", null, null,
                    () -> store.collection().countDocuments(Pruning.notPruned().append(Fields.STATE, TransactionStore.in(state)))));
        }
        for (TransactionState committed : List.of(TransactionState.APPLIED, TransactionState.DONE)) {
            long late = retrier.call("count", null, null, () -> store.collection().countDocuments(new Document("$and",
                    List.of(new Document(Fields.STATE, TransactionStore.in(committed)), LateCommit.filter(), Pruning.notPruned()))));
            counts.merge(committed, -late, Long::sum);
            counts.merge(TransactionState.CANCELED, late, Long::sum);
        }
        return counts;
    }

    /**
     * How long the least recently modified open transaction has waited, by the server's clock (a
     * commit written after its deadline is not open: it counts as canceled).
     */
    public Duration oldestOpen() {
        List<String> open = new ArrayList<>();
        for (TransactionState s : TransactionState.open()) {
            open.addAll(s.spellings());
        }
        Document oldest = retrier.call("find oldest", null, null, () -> store.collection()
                .find(new Document(Fields.STATE, new Document("$in", open)).append("$nor", List.of(LateCommit.filter())))
                .projection(new Document(Fields.LAST_MODIFIED, 1))
                .sort(new Document(Fields.LAST_MODIFIED, 1)).limit(1).first());
        if (oldest == null) {
            return Duration.ZERO;
        }
        Date modified = oldest.getDate(Fields.LAST_MODIFIED);
        if (modified == null) {
            return Duration.ZERO;
        }
        Duration age = Duration.between(modified.toInstant(), serverTime());
        return age.isNegative() ? Duration.ZERO : age;
    }

    /** Server time now. */
    public Instant serverTime() {
        return retrier.call("read clock", null, null, clock::now);
    }
}
