package io.mongo2pc.internal.tworound;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.tutorial.Finisher;
import io.mongo2pc.internal.tutorial.Finishing;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.CANCELING;
import static io.mongo2pc.TransactionState.DONE;

/**
 * A two-round transaction after its decision: committed, each entry is released (its increases
 * applied, marker and entry removed; no deadline: anyone may roll it forward), then {@code done};
 * canceling, each entry is undone under the owner's deadline, then {@code canceled}. With
 * {@code finishInBackground} the owner's caller returns at the commit point and a finisher thread
 * releases many transactions in one request per collection, their increments' entries and their
 * inserts', updates' and deletes' locks alike. Thread-safe.
 * Public for the reads and interactive packages, as are the members they use.
 */
public final class TwoRoundFinish {
    private static final Logger log = LoggerFactory.getLogger(TwoRoundFinish.class);
    private static final int FINISH_QUEUE = 1024;
    private static final int FINISH_BATCH = 128;

    private final TwoRoundContext c;
    private final Finisher<OwnedTransaction> finisher;

    TwoRoundFinish(TwoRoundContext c) {
        this.c = c;
        this.finisher = c.settings().finishInBackground()
                ? new Finisher<>("mongo2pc-two-round-finisher-" + c.settings().owner(), this::finishAll,
                        Math.max(1, Math.min(FINISH_QUEUE, c.settings().maxMarkers() / 2)), FINISH_BATCH, c.settings().finishLinger())
                : null;
    }

    public boolean awaitIdle(Duration timeout) {
        return finisher == null || finisher.awaitIdle(timeout);
    }

    public boolean close(Duration timeout) {
        return finisher == null || finisher.close(timeout);
    }

    /** Drives {@code tx} from its decision to its end; with {@code ownCall} and a finisher, only to its commit point. */
    public TransactionOutcome drive(OwnedTransaction tx, boolean ownCall) {
        if (tx.state == CANCELING) {
            undoAll(tx, true);
            c.writes().move(tx, Transition.CANCELING_TO_CANCELED, null);
        }
        if (tx.state == APPLIED) {
            if (ownCall && finisher != null && finisher.offer(tx)) {
                return new TransactionOutcome(tx.id, APPLIED, null); // the finisher's from here on
            }
            try {
                finish(tx);
            } catch (MongoException | TransactionException e) {
                if (!ownCall) {
                    throw e;
                }
                // Past its commit point the caller's transaction is committed, whatever finishing it met
                // (another process that took it over, its document finished and pruned, an error): that
                // must not read as a failure the caller might retry (and so pay twice).
                log.warn("transaction {} committed; finishing it failed ({}), it is rolled forward by others", tx.id, e.toString());
                return new TransactionOutcome(tx.id, APPLIED, null);
            }
        }
        counted(tx);
        return tx.outcome();
    }

    private void counted(OwnedTransaction tx) {
        tx.counted(c.settings().metrics());
    }

    /** Releases every entry (one request per collection), then moves to done. */
    void finish(OwnedTransaction tx) {
        for (List<Integer> group : groups(tx).values()) {
            List<UpdateOneModel<Document>> writes = new ArrayList<>();
            for (int i : group) {
                hook(CrashPoint.before(Step.RELEASE, i), tx.id);
                writes.add(release(tx, i));
            }
            WriteCombiner combiner = c.targets().combiner(tx.ops.get(group.get(0)).document());
            WriteCombiner.Answer[] answers = c.retrier().call("release", tx.id, tx.state, () -> {
                WriteCombiner.Answer[] each = combiner.answers(writes);
                for (int i : group) {
                    hook(CrashPoint.after(Step.RELEASE, i), tx.id);
                }
                return each;
            });
            for (int n = 0; n < group.size(); n++) {
                if (answers[n] != WriteCombiner.Answer.MATCHED) {
                    entryWrite(tx, group.get(n), writes.get(n), Step.RELEASE); // matched, or the entry gone: released (by anyone)
                }
            }
        }
        for (int i = 0; i < tx.ops.size(); i++) {
            if (!(tx.ops.get(i) instanceof Operation.Increment)) {
                releaseExclusive(tx, i);
            }
        }
        c.writes().move(tx, Transition.APPLIED_TO_DONE, null);
    }

    /**
     * Releases the lock of exclusive operation {@code i} (unlocked: an update changed in round 1b; or the document
     * deleted), by the lock stored on the document: DONE also when it is gone (released by anyone).
     */
    private void releaseExclusive(OwnedTransaction tx, int i) {
        DocumentRef ref = tx.ops.get(i).document();
        var coll = c.targets().collection(ref);
        hook(CrashPoint.before(Step.RELEASE, i), tx.id);
        c.retrier().call("release", tx.id, tx.state, () -> {
            Exclusive.releaseLocked(coll, ref.id(), tx.id, tx.nonce);
            // Inside the retried step: a lost acknowledgement sends the release again, which finds the lock gone.
            hook(CrashPoint.after(Step.RELEASE, i), tx.id);
            return null;
        });
    }

    /**
     * Undoes every entry and lock of {@code tx}: {@code fenced} under the owner's deadline (renewed
     * when passed), else by the nonce alone. Canceling, or still pending when it yields to an older
     * transaction (docs/CONFLICTS.md): either way only once no prepare of its round can still land.
     */
    public void undoAll(OwnedTransaction tx, boolean fenced) {
        for (int i = tx.ops.size() - 1; i >= 0; i--) {
            Operation op = tx.ops.get(i);
            for (int expired = 0; ; expired++) {
                if (fenced) {
                    c.writes().renewIfDue(tx);
                }
                hook(CrashPoint.before(Step.UNDO, i), tx.id);
                Participants.Result result;
                if (op instanceof Operation.Increment inc) {
                    var write = Entries.undoWrite(op.document().id(), tx.id, tx.nonce, Entries.now(inc), fenced ? tx.deadline : null);
                    result = entryWrite(tx, i, write, Step.UNDO);
                } else {
                    result = undoExclusive(tx, i, fenced);
                }
                if (result.kind() == Participants.Kind.DONE) {
                    break;
                }
                if (!fenced || expired >= 3) {
                    throw new LeaseLostException("transaction " + tx.id + ": the undo of " + op.document()
                            + " was refused " + (expired + 1) + " times", tx.id, tx.state);
                }
                c.writes().renew(tx);
            }
        }
    }

    private Participants.Result undoExclusive(OwnedTransaction tx, int i, boolean fenced) {
        Operation op = tx.ops.get(i);
        DocumentRef ref = op.document();
        return c.retrier().call("undo", tx.id, tx.state, () -> {
            Participants.Result result = Exclusive.undo(c.targets().collection(ref), ref.id(), tx.id, tx.nonce,
                    OperationCodec.kind(op), fenced ? tx.deadline : null);
            hook(CrashPoint.after(Step.UNDO, i), tx.id);
            return result;
        });
    }

    private Participants.Result entryWrite(OwnedTransaction tx, int i, UpdateOneModel<Document> write, Step step) {
        DocumentRef ref = tx.ops.get(i).document();
        return c.retrier().call(step.name().toLowerCase(Locale.ROOT), tx.id, tx.state, () -> {
            Participants.Result result = Entries.entryWrite(c.targets().collection(ref), ref.id(), tx.id, tx.nonce, write);
            if (step == Step.UNDO) {
                hook(CrashPoint.after(Step.UNDO, i), tx.id);
            }
            return result;
        });
    }

    /** The release of operation {@code i} of {@code tx} (no deadline: anyone may send it once it is committed). */
    public static UpdateOneModel<Document> release(OwnedTransaction tx, int i) {
        Operation.Increment op = (Operation.Increment) tx.ops.get(i);
        return Entries.releaseWrite(op.document().id(), tx.id, tx.nonce, Entries.later(op));
    }

    /**
     * The release of operation {@code i} of {@code tx}, whoever sends it: an increment's (its
     * increases, marker and entry), or an exclusive operation's, by its lock with the nonce: unlocked
     * (an insert's or an update's change is in), or the document deleted for a delete.
     */
    private static WriteModel<Document> releaseOf(OwnedTransaction tx, int i) {
        Operation op = tx.ops.get(i);
        if (op instanceof Operation.Increment) {
            return release(tx, i);
        }
        Document locked = Exclusive.locked(op.document().id(), tx.id, tx.nonce);
        return op instanceof Operation.Delete ? new DeleteOneModel<>(locked)
                : new UpdateOneModel<>(locked, new Document("$unset", new Document(Fields.LOCK, "")));
    }

    /** The increments of {@code tx} by collection: one request each (inserts, updates and deletes go one by one). */
    public static Map<List<String>, List<Integer>> groups(OwnedTransaction tx) {
        return RoundOne.groups(tx.ops);
    }

    /**
     * The finisher's round: the releases of many committed transactions in one request per
     * collection, then their moves to done in one request. A release needs no deadline and matches
     * only while its entry is there, so a request that was answered released every entry (by this
     * request or by whoever rolled it forward first); a failed request, a move that did not match or
     * a transient error at a crash point sends the transaction to {@link #finish} on its own. Any
     * other error at a crash point leaves it where it is, to be rolled forward by others.
     */
    private void finishAll(List<OwnedTransaction> batch) {
        List<OwnedTransaction> alone = new ArrayList<>();
        Map<List<String>, List<WriteModel<Document>>> writes = new LinkedHashMap<>();
        Map<List<String>, List<OwnedTransaction>> senders = new LinkedHashMap<>();
        List<OwnedTransaction> releasing = new ArrayList<>();
        for (OwnedTransaction tx : batch) {
            if (reached(tx, Step.RELEASE, CrashPoint.Phase.BEFORE, alone)) {
                releasing.add(tx);
                for (int i = 0; i < tx.ops.size(); i++) {
                    DocumentRef ref = tx.ops.get(i).document();
                    List<String> key = List.of(ref.target(), ref.database(), ref.collection());
                    writes.computeIfAbsent(key, k -> new ArrayList<>()).add(releaseOf(tx, i));
                    List<OwnedTransaction> from = senders.computeIfAbsent(key, k -> new ArrayList<>());
                    if (from.isEmpty() || from.get(from.size() - 1) != tx) {
                        from.add(tx);
                    }
                }
            }
        }
        Set<OwnedTransaction> failed = Collections.newSetFromMap(new IdentityHashMap<>());
        writes.forEach((key, list) -> {
            try {
                c.targets().collection(key.get(0), key.get(1), key.get(2)).bulkWrite(list, new BulkWriteOptions().ordered(false));
            } catch (MongoException e) {
                failed.addAll(senders.get(key));
            }
        });
        List<OwnedTransaction> moving = new ArrayList<>();
        for (OwnedTransaction tx : releasing) {
            if (failed.contains(tx)) {
                alone.add(tx);
            } else if (reached(tx, Step.RELEASE, CrashPoint.Phase.AFTER, alone)
                    && reached(tx, Step.FINISH, CrashPoint.Phase.BEFORE, alone)) {
                moving.add(tx);
            }
        }
        List<UpdateOneModel<Document>> moves = new ArrayList<>();
        moving.forEach(tx -> moves.add(TransactionStore.transitionWrite(Transition.APPLIED_TO_DONE, APPLIED, TransactionStore.owned(tx.id, tx.epoch), null)));
        boolean moved = !moves.isEmpty() && Finishing.allMatched(c.store().collection(), moves);
        for (OwnedTransaction tx : moving) {
            if (!moved) {
                alone.add(tx);
            } else if (reached(tx, Step.FINISH, CrashPoint.Phase.AFTER, alone)) {
                tx.state = DONE;
                counted(tx);
            }
        }
        for (OwnedTransaction tx : alone) {
            try {
                finish(tx);
                counted(tx);
            } catch (LeaseLostException e) {
                log.info("transaction {} was finished by another process: {}", tx.id, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("transaction {} is committed but not finished; it is rolled forward by others: {}", tx.id, e.toString());
            }
        }
    }

    /** The crash points of {@code step} in {@code phase} for a transaction the finisher holds (see {@link Finishing#reached}). */
    private boolean reached(OwnedTransaction tx, Step step, CrashPoint.Phase phase, List<OwnedTransaction> alone) {
        return Finishing.reached(c.writes(), tx, phase, alone, () -> {
            if (step == Step.FINISH) {
                hook(phase == CrashPoint.Phase.BEFORE ? CrashPoint.before(step, -1) : CrashPoint.after(step, -1), tx.id);
            } else {
                c.crashPoints().each(step, phase, tx.ops.size(), tx.id);
            }
        });
    }

    private void hook(CrashPoint point, Object id) {
        c.settings().crashHook().reached(point, id);
    }
}
