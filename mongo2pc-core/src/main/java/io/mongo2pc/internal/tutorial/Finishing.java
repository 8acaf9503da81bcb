package io.mongo2pc.internal.tutorial;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.internal.participants.IncrementWrites;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.Targets;
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

/**
 * After the commit point: releases a transaction's markers and moves it to {@code done}, in the
 * caller's thread ({@link #finish}) or, if configured, handed to one background thread that
 * finishes many transactions per request ({@link #offer}). Thread-safe.
 * Public for the tworound package and Engine, as are the members they use.
 */
public final class Finishing {
    private static final Logger log = LoggerFactory.getLogger(Finishing.class);
    /**
     * The most committed transactions waiting to be finished before callers wait for the finisher:
     * at most half of maxMarkers, so that the markers they still hold cannot fill a document.
     */
    private static final int QUEUE = 1024;
    /** The most transactions finished in one round of the finisher (two requests per collection). */
    private static final int BATCH = 128;

    private final TransactionManagerSettings settings;
    private final Targets targets;
    private final TransactionStore store;
    private final Participants participants;
    private final OwnerWrites writes;
    private final CrashPoints crashPoints;
    /** The background finisher, if configured; else null. */
    private final Finisher<OwnedTransaction> finisher;

    public Finishing(TransactionManagerSettings settings, Targets targets, TransactionStore store, Participants participants,
              OwnerWrites writes, CrashPoints crashPoints) {
        this.settings = settings;
        this.targets = targets;
        this.store = store;
        this.participants = participants;
        this.writes = writes;
        this.crashPoints = crashPoints;
        this.finisher = settings.finishInBackground()
                ? new Finisher<>("mongo2pc-finisher-" + settings.owner(), this::finishAll,
                        Math.max(1, Math.min(QUEUE, settings.maxMarkers() / 2)), BATCH, settings.finishLinger())
                : null;
    }

    /** True if committed transactions of the caller's own calls are finished in the background. */
    boolean inBackground() {
        return finisher != null;
    }

    /** True once the background finisher is closed: the manager starts nothing more. */
    public boolean isClosed() {
        return finisher != null && finisher.isClosed();
    }

    /**
     * Hands a committed transaction to the background finisher, waiting while it is full; false if
     * it is closed (or this thread is interrupted): the caller then finishes it. Once handed over,
     * {@code tx} is the finisher's thread's (which counts it once done): the caller must not read it.
     */
    boolean offer(OwnedTransaction tx) {
        return finisher.offer(tx);
    }

    /** See {@code Engine.awaitFinished}. */
    public boolean awaitIdle(Duration timeout) {
        return finisher == null || finisher.awaitIdle(timeout);
    }

    /** See {@code Engine.close}. */
    public boolean close(Duration timeout) {
        return finisher == null || finisher.close(timeout);
    }

    /** Releases every marker of a committed transaction, then moves it to done. */
    void finish(OwnedTransaction tx) {
        boolean released = tx.batchable()
                && writes.batch(tx, Step.RELEASE, deadline -> participants.releaseIncrements(tx.increments(), tx.id, deadline));
        for (int i = 0; i < tx.ops.size() && !released; i++) {
            Operation op = tx.ops.get(i);
            writes.participantWrite(tx, Step.RELEASE, i, deadline -> participants.release(op, tx.id, deadline));
        }
        writes.move(tx, Transition.APPLIED_TO_DONE, null);
    }

    /**
     * The background finisher's round: the release writes of many committed transactions in one
     * request per collection, then their moves to done in one request. These are the same fenced,
     * idempotent writes as {@link #finish}'s; a transaction whose writes are not all known to have
     * matched (an error, a lost acknowledgement, a takeover) is finished on its own by
     * {@link #finish}, which tells why. A crash point that throws anything else stops that
     * transaction where it is, as a crash of this process would, and leaves it to recovery.
     */
    private void finishAll(List<OwnedTransaction> batch) {
        List<OwnedTransaction> alone = new ArrayList<>();
        Map<List<String>, List<OwnedTransaction>> byCollection = new LinkedHashMap<>();
        for (OwnedTransaction tx : batch) {
            if (tx.batchable()) {
                DocumentRef first = tx.ops.get(0).document();
                byCollection.computeIfAbsent(List.of(first.target(), first.database(), first.collection()),
                        k -> new ArrayList<>()).add(tx);
            } else {
                alone.add(tx);
            }
        }
        List<OwnedTransaction> released = new ArrayList<>();
        for (List<OwnedTransaction> group : byCollection.values()) {
            List<OwnedTransaction> sent = new ArrayList<>();
            List<UpdateOneModel<Document>> releases = new ArrayList<>();
            for (OwnedTransaction tx : group) {
                if (reached(tx, CrashPoint.Phase.BEFORE, alone, () -> releasePoints(tx, CrashPoint.Phase.BEFORE))) {
                    releases.addAll(IncrementWrites.releaseWrites(tx.increments(), tx.id, tx.deadline));
                    sent.add(tx);
                }
            }
            boolean matched = !sent.isEmpty() && allMatched(targets.collection(sent.get(0).ops.get(0).document()), releases);
            for (OwnedTransaction tx : sent) {
                if (!matched) {
                    alone.add(tx);
                } else if (reached(tx, CrashPoint.Phase.AFTER, alone, () -> releasePoints(tx, CrashPoint.Phase.AFTER))) {
                    released.add(tx);
                }
            }
        }
        Transition done = Transition.APPLIED_TO_DONE;
        List<OwnedTransaction> moving = new ArrayList<>();
        List<UpdateOneModel<Document>> moves = new ArrayList<>();
        for (OwnedTransaction tx : released) {
            if (reached(tx, CrashPoint.Phase.BEFORE, alone, () -> crashPoints.reach(done, CrashPoint.Phase.BEFORE, tx.id))) {
                moves.add(TransactionStore.transitionWrite(done, tx.state, TransactionStore.owned(tx.id, tx.epoch), null));
                moving.add(tx);
            }
        }
        boolean moved = !moving.isEmpty() && allMatched(store.collection(), moves);
        for (OwnedTransaction tx : moving) {
            if (!moved) {
                alone.add(tx);
            } else if (reached(tx, CrashPoint.Phase.AFTER, alone, () -> crashPoints.reach(done, CrashPoint.Phase.AFTER, tx.id))) {
                tx.state = done.to(tx.state);
                tx.counted(settings.metrics());
            }
        }
        for (OwnedTransaction tx : alone) {
            try {
                finish(tx);
                tx.counted(settings.metrics());
            } catch (LeaseLostException e) {
                log.info("transaction {} was finished by another process: {}", tx.id, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("transaction {} is committed but not finished; recovery will finish it: {}", tx.id, e.toString());
            }
        }
    }

    private void releasePoints(OwnedTransaction tx, CrashPoint.Phase phase) {
        crashPoints.each(Step.RELEASE, phase, tx.ops.size(), tx.id);
    }

    /**
     * Runs the crash points of a transaction the finisher holds in {@code phase} (renewing its
     * lease first if due); false if something threw: a transient error (an acknowledgement lost)
     * sends it to {@code alone}, anything else leaves it to recovery.
     */
    private boolean reached(OwnedTransaction tx, CrashPoint.Phase phase, List<OwnedTransaction> alone, Runnable crashPoints) {
        return reached(writes, tx, phase, alone, crashPoints);
    }

    /** {@link #reached(OwnedTransaction, CrashPoint.Phase, List, Runnable)} for any finisher of {@code writes}' transactions. */
    public static boolean reached(OwnerWrites writes, OwnedTransaction tx, CrashPoint.Phase phase, List<OwnedTransaction> alone,
                           Runnable crashPoints) {
        try {
            if (phase == CrashPoint.Phase.BEFORE) {
                writes.renewIfDue(tx);
            }
            crashPoints.run();
            return true;
        } catch (LeaseLostException e) {
            log.info("transaction {} was taken over by another process, which finishes it: {}", tx.id, e.getMessage());
            return false;
        } catch (RuntimeException e) {
            if (e instanceof MongoException m && Retrier.isTransient(m)) {
                alone.add(tx);
            } else {
                log.warn("transaction {} is committed but not finished; recovery will finish it: {}", tx.id, e.toString());
            }
            return false;
        }
    }

    /** One unordered bulk request; true if every write matched a document, false if not or if it failed. */
    public static boolean allMatched(MongoCollection<Document> collection, List<UpdateOneModel<Document>> writes) {
        try {
            return collection.bulkWrite(writes, new BulkWriteOptions().ordered(false))
                    .getMatchedCount() == writes.size();
        } catch (MongoException e) {
            log.debug("finishing {} writes on {} failed: {}", writes.size(), collection.getNamespace(), e.toString());
            return false;
        }
    }
}
