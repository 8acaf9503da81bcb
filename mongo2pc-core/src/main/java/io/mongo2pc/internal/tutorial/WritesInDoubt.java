package io.mongo2pc.internal.tutorial;

import com.mongodb.MongoException;
import io.mongo2pc.Operation;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Participant writes whose request failed without the server's answer: the request may still be
 * queued or running, and take effect later. Thread-safe.
 *
 * <ul>
 *   <li>An apply in doubt is retried only once its deadline has passed on every server, so that a
 *       late copy can no longer take effect behind the retry's back (a second debit).</li>
 *   <li>An insert is an upsert, which no deadline can refuse: a late copy creates its document
 *       whenever it lands, even after its transaction ended. So the transaction notes the insert
 *       ({@code insertsInDoubt}, the operation's index) before anything else happens to it, a new
 *       owner notes every insert at its takeover (the old owner's may be in flight), and each
 *       recovery pass deletes, for noted transactions that have ended, whatever document still
 *       carries their insert's lock. An ended transaction has released or undone all of its locks,
 *       so such a document can only be a late copy's. The note is kept for {@link #HORIZON} after
 *       the transaction ended; a copy held longer still reads as never written and is removed by
 *       the next writer of its id.</li>
 * </ul>
 * Public for the tworound and recovery packages and Engine, as are the members they use.
 */
public final class WritesInDoubt {
    private static final Logger log = LoggerFactory.getLogger(WritesInDoubt.class);
    /** How long after its transaction ended a late copy of an insert is still looked for by recovery. */
    static final Duration HORIZON = Duration.ofMinutes(10);
    private static final int SWEEP_BATCH = 500;

    private final Targets targets;
    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final Duration lease;
    private final Duration maxClockSkew;
    private final Function<Document, List<Operation>> operationsOf;

    public WritesInDoubt(Targets targets, TransactionStore store, ServerClock clock, Retrier retrier, Duration lease,
                  Duration maxClockSkew, Function<Document, List<Operation>> operationsOf) {
        this.targets = targets;
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.lease = lease;
        this.maxClockSkew = maxClockSkew;
        this.operationsOf = operationsOf;
    }

    /**
     * Runs a participant write of operation {@code index}; if an apply fails without an answer,
     * notes an insert on the transaction, then waits until the apply's deadline has passed on every
     * server, before the failure goes on to be retried. Undo, release and state changes need no
     * wait: a late copy of one matches nothing.
     */
    Participants.Result settled(Step step, Operation op, int index, Object txId, Instant deadline,
                                Supplier<Participants.Result> write) {
        try {
            return write.get();
        } catch (MongoException e) {
            if (step == Step.APPLY && Retrier.isInDoubt(e)) {
                try {
                    if (op instanceof Operation.Insert) {
                        // Retried on its own; if it cannot be written the owner stops here, and the
                        // takeover that finishes the transaction notes the insert instead.
                        retrier.call("note an insert in doubt", txId, null, () -> note(txId, List.of(index)));
                    }
                } finally {
                    awaitPassedEverywhere(deadline, txId);
                }
            }
            throw e;
        }
    }

    /** Notes every insert of {@code ops} on a transaction just taken over: its previous owner's may be in flight. */
    public void noteInserts(Object txId, List<Operation> ops) {
        List<Integer> inserts = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i) instanceof Operation.Insert) {
                inserts.add(i);
            }
        }
        if (!inserts.isEmpty()) {
            retrier.call("note inserts in doubt", txId, null, () -> note(txId, inserts));
        }
    }

    private boolean note(Object txId, List<Integer> indexes) {
        // Not a state change: lastModified (the owner's lease) stays as it is.
        return store.collection().updateOne(new Document(Fields.ID, txId), new Document("$addToSet",
                new Document(Fields.INSERTS_IN_DOUBT, new Document("$each", indexes)))).getMatchedCount() == 1;
    }

    /**
     * Deletes what late copies of inserts left for transactions that have ended (each noted
     * insert's document, only while it carries that transaction's insert lock); forgets the notes
     * of transactions ended more than {@link #HORIZON} ago. Returns the documents it deleted.
     */
    public List<RecoveryReport.LateInsert> sweep(Instant now) {
        List<RecoveryReport.LateInsert> removed = new ArrayList<>();
        for (Document tx : retrier.call("find inserts in doubt", null, null, () -> store.withInsertsInDoubt(SWEEP_BATCH))) {
            Object id = tx.get(Fields.ID);
            try {
                removed.addAll(sweep(tx, id));
                Date ended = tx.getDate(Fields.LAST_MODIFIED);
                if (ended != null && ended.toInstant().isBefore(now.minus(HORIZON))) {
                    store.collection().updateOne(new Document(Fields.ID, id),
                            new Document("$unset", new Document(Fields.INSERTS_IN_DOUBT, "")));
                }
            } catch (RuntimeException e) {
                // a target down, a format unknown: the next pass tries again
                log.warn("could not look for late inserts of transaction {}: {}", id, e.toString());
            }
        }
        return removed;
    }

    private List<RecoveryReport.LateInsert> sweep(Document tx, Object id) {
        List<Operation> ops = operationsOf.apply(tx);
        List<RecoveryReport.LateInsert> removed = new ArrayList<>();
        for (Object index : tx.getList(Fields.INSERTS_IN_DOUBT, Object.class, List.of())) {
            int i = index instanceof Number n ? n.intValue() : -1;
            if (i >= 0 && i < ops.size() && ops.get(i) instanceof Operation.Insert insert) {
                long deleted = targets.collection(insert.document()).deleteOne(new Document(Fields.ID, insert.document().id())
                        .append(Fields.LOCK_TX, id).append(Fields.LOCK_NONCE, new Document("$exists", false)).append(Fields.LOCK + ".kind", "insert")).getDeletedCount();
                if (deleted > 0) {
                    log.info("deleted {}, left by a late copy of the insert of transaction {} ({})", insert.document(), id,
                            LateCommit.stateOf(tx).stored());
                    removed.add(new RecoveryReport.LateInsert(insert.document(), id));
                }
            }
        }
        return removed;
    }

    /** Waits until every server's clock (within maxClockSkew of the coordinator's) is past {@code deadline}. */
    public void awaitPassedEverywhere(Instant deadline, Object txId) {
        Instant target = deadline.plus(maxClockSkew).plusMillis(1);
        Instant bound = clock.lastBound();
        long waitNanos = bound == null
                ? lease.plus(maxClockSkew).toNanos() // no reading: the deadline is within a lease of now
                : Duration.between(bound, target).toNanos();
        if (waitNanos <= 0) {
            return;
        }
        log.warn("a participant write failed without an answer; waiting {} ms for its deadline to pass before retrying",
                TimeUnit.NANOSECONDS.toMillis(waitNanos));
        try {
            TimeUnit.NANOSECONDS.sleep(waitNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while waiting for a write in doubt to expire",
                    txId, null, e);
        }
    }
}
