package io.mongo2pc.internal.admin;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.Sorts;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.PruneResult;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.Retrier;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * Prune: finished transactions not changed for an age are replaced by a stub that keeps their id
 * and outcome (so that the id keeps answering for its transaction and is never run again), or,
 * with {@link PruneOptions#forgetIds()}, deleted outright with the stubs of earlier prunes. Refuses
 * an age below the longest lease of the transactions' owners plus the clock-skew margin unless
 * forced: until then a finished transaction may still meet its owner. Canceled transactions are
 * kept unless included. Thread-safe.
 * Public for the recovery package and Engine, as are the members they use.
 */
public final class Pruning {
    /** On a stub: when it was pruned (server time). A document with it is no transaction any more, only its id and outcome. */
    static final String PRUNED = "pruned";
    /** The most transactions replaced by stubs in one request. */
    private static final int BATCH = 500;
    /** What a stub keeps beside its state: enough for the owner, readers and a caller's id run again to know the outcome. */
    private static final List<String> KEPT = List.of(Fields.LAST_MODIFIED, TwoRoundFields.NONCE, Fields.TOKEN, Fields.EPOCH,
            TwoRoundFields.PROTOCOL, Fields.REASON, Fields.CODE, Fields.FAILED_OP);

    private final TransactionStore store;
    private final AdminQueries admin;
    private final Retrier retrier;
    private final Duration lease;
    private final Duration maxClockSkew;

    public Pruning(TransactionStore store, AdminQueries admin, Retrier retrier, Duration lease, Duration maxClockSkew) {
        this.store = store;
        this.admin = admin;
        this.retrier = retrier;
        this.lease = lease;
        this.maxClockSkew = maxClockSkew;
    }

    /** A filter that keeps documents that are not stubs (of transactions pruned with their ids kept). */
    static Document notPruned() {
        return new Document(PRUNED, new Document("$exists", false));
    }

    public PruneResult prune(Duration olderThan, PruneOptions options) {
        if (olderThan == null || olderThan.isNegative()) {
            throw new IllegalArgumentException("prune needs an age of zero or more, got " + olderThan);
        }
        Instant now = admin.serverTime();
        Document finished = new Document(Fields.STATE, new Document("$in", TransactionStore.terminal()))
                .append(Fields.LAST_MODIFIED, TransactionStore.notAfter(now.minus(olderThan)));
        if (!options.forgetIds()) {
            finished.putAll(notPruned());
        }
        // Counted by the lateness rule: a commit written after its deadline is canceled, whatever it stores.
        Document done = and(finished, new Document(Fields.STATE, TransactionStore.in(TransactionState.DONE)),
                new Document("$nor", List.of(LateCommit.filter())));
        Document canceled = and(finished, new Document("$or", List.of(
                new Document(Fields.STATE, TransactionStore.in(TransactionState.CANCELED)), LateCommit.filter())));
        Document pruned = options.includeCanceled() ? finished : done;
        long doneCount = count(done);
        long canceledCount = count(canceled);
        Duration minimum = Duration.ofMillis(longestLease(pruned)).plus(maxClockSkew);
        if (olderThan.compareTo(minimum) < 0 && !options.force()) {
            throw new InvalidTransactionException("prune refused an age of " + text(olderThan) + ": a transaction finished"
                    + " less than " + text(minimum) + " ago may still meet its owner (its last state change, a late copy of one"
                    + " of its writes); that is the longest lease of the owners, " + text(minimum.minus(maxClockSkew))
                    + ", plus the clock-skew margin, " + text(maxClockSkew) + ". Prune older ones, or force it");
        }
        long keptCanceled = options.includeCanceled() ? 0 : canceledCount;
        long prunedCanceled = options.includeCanceled() ? canceledCount : 0;
        if (options.dryRun()) {
            return new PruneResult(doneCount, prunedCanceled, keptCanceled, true, !options.forgetIds(), minimum);
        }
        if (options.forgetIds()) {
            long d = retrier.call("prune", null, null, () -> store.collection().deleteMany(done).getDeletedCount());
            long c = options.includeCanceled() ? retrier.call("prune", null, null, () -> store.collection().deleteMany(canceled)
                    .getDeletedCount()) : 0;
            return new PruneResult(d, c, keptCanceled, false, false, minimum);
        }
        long[] stubbed = stubs(pruned, new Date(now.toEpochMilli()));
        return new PruneResult(stubbed[0], stubbed[1], keptCanceled, false, true, minimum);
    }

    /** Replaces the transactions {@code filter} matches by stubs, a batch at a time; how many of each outcome (done, canceled). */
    private long[] stubs(Document filter, Date prunedAt) {
        long[] count = new long[2];
        while (true) {
            List<Document> batch = retrier.call("prune", null, null, () -> store.collection().find(filter)
                    .projection(Projections.include(kept())).limit(BATCH).into(new ArrayList<>()));
            List<ReplaceOneModel<Document>> done = new ArrayList<>();
            List<ReplaceOneModel<Document>> canceled = new ArrayList<>();
            for (Document doc : batch) {
                Document stub = stub(doc, prunedAt);
                ReplaceOneModel<Document> replace = new ReplaceOneModel<>(new Document(Fields.ID, doc.get(Fields.ID))
                        .append(Fields.STATE, doc.get(Fields.STATE)).append(PRUNED, new Document("$exists", false)), stub);
                (TransactionState.DONE.stored().equals(stub.get(Fields.STATE)) ? done : canceled).add(replace);
            }
            long matched = 0;
            for (int k = 0; k < 2; k++) {
                List<ReplaceOneModel<Document>> writes = k == 0 ? done : canceled;
                if (!writes.isEmpty()) {
                    long n = retrier.call("prune", null, null, () -> store.collection().bulkWrite(writes).getMatchedCount());
                    count[k] += n;
                    matched += n;
                }
            }
            if (batch.size() < BATCH || matched == 0) {
                return count; // the last batch, or one that others changed meanwhile (the next prune sees it again)
            }
        }
    }

    /**
     * The stub of {@code doc}: its id, the outcome it counts as (done or canceled, by the lateness
     * rule), when it last changed and when it was pruned, its nonce, token and epoch (so that its owner,
     * readers and a caller's id run again still recognise it) and its reason.
     */
    static Document stub(Document doc, Date prunedAt) {
        boolean late = LateCommit.late(doc);
        Document stub = new Document(Fields.ID, doc.get(Fields.ID)).append(Fields.STATE, LateCommit.stateOf(doc).stored());
        for (String field : KEPT) {
            if (doc.containsKey(field)) {
                stub.append(field, doc.get(field));
            }
        }
        if (late) {
            stub.append(Fields.REASON, LateCommit.REASON).append(Fields.CODE, ReasonCode.TIMED_OUT.name());
        }
        return stub.append(PRUNED, prunedAt);
    }

    /** True if {@code doc} is a stub of a pruned transaction. */
    public static boolean isStub(Document doc) {
        return doc != null && doc.containsKey(PRUNED);
    }

    private static List<String> kept() {
        List<String> fields = new ArrayList<>(KEPT);
        fields.addAll(List.of(Fields.STATE, TwoRoundFields.INSERTED_AT, TwoRoundFields.UNTIL));
        return fields;
    }

    /** The longest lease, in milliseconds, of this manager and of the owners of the transactions {@code filter} matches. */
    private long longestLease(Document filter) {
        Document longest = retrier.call("prune", null, null, () -> store.collection()
                .find(and(filter, new Document(Fields.LEASE_MS, new Document("$gt", lease.toMillis()))))
                .projection(Projections.include(Fields.LEASE_MS)).sort(Sorts.descending(Fields.LEASE_MS)).limit(1).first());
        Long stored = longest == null ? null : TransactionStore.leaseOf(longest);
        return stored == null ? lease.toMillis() : Math.max(lease.toMillis(), stored);
    }

    private long count(Document filter) {
        return retrier.call("prune", null, null, () -> store.collection().countDocuments(filter));
    }

    /** A duration as the CLI writes one: {@code 31s}, {@code 1500ms}, {@code 5m}, {@code 2h}, {@code 7d}. */
    static String text(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0s";
        }
        for (long[] unit : new long[][] {{86_400_000L, 'd'}, {3_600_000L, 'h'}, {60_000L, 'm'}, {1_000L, 's'}}) {
            if (ms % unit[0] == 0) {
                return ms / unit[0] + String.valueOf((char) unit[1]);
            }
        }
        return ms + "ms";
    }

    private static Document and(Document... filters) {
        return new Document("$and", List.of(filters));
    }
}
