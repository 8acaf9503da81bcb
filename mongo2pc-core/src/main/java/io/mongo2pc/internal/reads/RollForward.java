package io.mongo2pc.internal.reads;

import io.mongo2pc.internal.format.Ids;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.tutorial.Finisher;
import io.mongo2pc.internal.tworound.TwoRoundFinish;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Rolls forward, off the readers' path, the committed two-round transactions whose markers a
 * reader met ({@code readCommitted}, one document or a cut): a reader only hands the id over
 * ({@link #met}: no request, never waits; a full queue drops it, and recovery or the next reader
 * finds it again). One thread of the manager takes the ids in batches, lingering first so that a
 * live owner's finisher usually ends its own transaction before this looks at it, reads the
 * transactions in one request and, for each still {@code applied} under the two-round rules,
 * releases every entry (the release needs no deadline and matches only while its entry is there:
 * anyone may send it) in one request per collection and every lock of its inserts, updates and
 * deletes one by one, then moves it to {@code done} by a
 * compare-and-set on state, epoch and nonce (a takeover since, or its owner, wins instead; the
 * owner reads it back as its own move). So a committed transaction whose owner died leaves no
 * marker on what is read for longer than this linger, not for its whole lease. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class RollForward {
    private static final Logger log = LoggerFactory.getLogger(RollForward.class);
    private static final int QUEUE = 1024;
    private static final int BATCH = 128;
    /** How long the first transaction of a round waits for more (and for its owner's finisher). */
    static final Duration LINGER = Duration.ofMillis(200);

    private final Targets targets;
    private final TransactionStore store;
    private final Function<Document, List<Operation>> operationsOf;
    private final CrashHook crashHook;
    /** Ids handed over and not yet taken by a round (by {@link Ids#key}): each is queued once. */
    private final Set<Object> queued = ConcurrentHashMap.newKeySet();
    private final Finisher<Object> thread;

    public RollForward(Targets targets, TransactionStore store, Function<Document, List<Operation>> operationsOf,
                CrashHook crashHook, String owner) {
        this.targets = targets;
        this.store = store;
        this.operationsOf = operationsOf;
        this.crashHook = crashHook;
        this.thread = new Finisher<>("mongo2pc-roll-forward-" + owner, this::round, QUEUE, BATCH, LINGER);
    }

    /** A reader met a marker of {@code txId}, committed under the two-round rules: roll it forward soon. */
    public void met(Object txId) {
        Object key = Ids.key(txId);
        if (queued.add(key) && !thread.offerNow(txId)) {
            queued.remove(key);
        }
    }

    /** Stops the thread, waiting up to {@code timeout} for what it holds (what is left is recovery's). */
    public boolean close(Duration timeout) {
        return thread.close(timeout);
    }

    private void round(List<Object> ids) {
        ids.forEach(id -> queued.remove(Ids.key(id)));
        try {
            List<OwnedTransaction> committed = new ArrayList<>();
            for (Document doc : store.findAll(ids)) {
                // Counted by the lateness rule: a commit written after its deadline is canceled, never rolled forward.
                if (TwoRoundFields.follows(doc) && LateCommit.stateOf(doc) == TransactionState.APPLIED
                        && doc.get(TwoRoundFields.NONCE) instanceof String nonce) {
                    OwnedTransaction tx = new OwnedTransaction(doc.get(Fields.ID), TransactionStore.epochOf(doc),
                            operationsOf.apply(doc), TransactionState.APPLIED, null);
                    tx.nonce = nonce;
                    committed.add(tx);
                }
            }
            rollForward(committed);
        } catch (RuntimeException e) {
            log.info("could not roll forward {} committed transactions a reader met; recovery will: {}", ids.size(), e.toString());
        }
    }

    /** Releases every entry of {@code committed} (one request per collection), then moves those released to done. */
    private void rollForward(List<OwnedTransaction> committed) {
        Map<List<String>, List<UpdateOneModel<Document>>> releases = new LinkedHashMap<>();
        Map<List<String>, List<OwnedTransaction>> senders = new LinkedHashMap<>();
        List<OwnedTransaction> releasing = new ArrayList<>();
        for (OwnedTransaction tx : committed) {
            if (reached(CrashPoint.before(Step.RESOLVE, -1), tx)) {
                releasing.add(tx);
                TwoRoundFinish.groups(tx).forEach((key, group) -> {
                    group.forEach(i -> releases.computeIfAbsent(key, k -> new ArrayList<>()).add(TwoRoundFinish.release(tx, i)));
                    senders.computeIfAbsent(key, k -> new ArrayList<>()).add(tx);
                });
            }
        }
        releases.forEach((key, writes) -> {
            try {
                targets.collection(key.get(0), key.get(1), key.get(2)).bulkWrite(writes, new BulkWriteOptions().ordered(false));
            } catch (RuntimeException e) {
                releasing.removeAll(senders.get(key)); // some entries may be left: not done
                log.info("could not roll forward in {}: {}", key, e.toString());
            }
        });
        // Inserts, updates and deletes: each lock released on its own (by the lock with the nonce, no
        // deadline); a transaction whose lock is still there (or whose release failed) is not done.
        releasing.removeIf(tx -> !locksReleased(tx));
        // Every entry and lock of these is released (a release matches only while it is there): done.
        List<UpdateOneModel<Document>> moves = new ArrayList<>();
        for (OwnedTransaction tx : releasing) {
            if (reached(CrashPoint.after(Step.RESOLVE, -1), tx)) {
                moves.add(TransactionStore.transitionWrite(Transition.APPLIED_TO_DONE, TransactionState.APPLIED,
                        TransactionStore.owned(tx.id, tx.epoch).append(TwoRoundFields.NONCE, tx.nonce), null));
            }
        }
        if (!moves.isEmpty()) {
            store.collection().bulkWrite(moves, new BulkWriteOptions().ordered(false));
        }
    }

    /**
     * Releases the lock of each insert, update and delete of {@code tx}; false if one is still there
     * or a request failed. Without this, done would leave a lock naming a document that prune may
     * delete, and the sweep would then undo a committed change behind a tombstone.
     */
    private boolean locksReleased(OwnedTransaction tx) {
        try {
            for (Operation op : tx.ops) {
                if (op.exclusive() && Exclusive.releaseLocked(targets.collection(op.document()), op.document().id(), tx.id, tx.nonce)
                        .kind() != Participants.Kind.DONE) {
                    return false;
                }
            }
            return true;
        } catch (RuntimeException e) {
            log.info("could not release the locks of transaction {}: {}", tx.id, e.toString());
            return false;
        }
    }

    /** The crash hook at {@code point} for {@code tx}; false if it stopped there (a simulated crash of this thread's work). */
    private boolean reached(CrashPoint point, OwnedTransaction tx) {
        try {
            crashHook.reached(point, tx.id);
            return true;
        } catch (RuntimeException e) {
            log.info("roll forward of transaction {} stopped at {}: {}", tx.id, point, e.toString());
            return false;
        }
    }
}
