package io.mongo2pc.internal.tworound;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Round 1 of the two-round commit: every prepare of a transaction at once, one request per
 * participant collection (group-committed with other transactions' writes), in parallel with
 * each other and with the insert of the transaction document, which the calling thread sends
 * meanwhile. The prepares are sent before the insert, so a crash between leaves prepares without
 * a document (which resolvers handle), never a document whose prepares nobody sent. Thread-safe.
 */
final class RoundOne {
    /** What one prepare did: a participant result, or in doubt (sent, no answer) under {@code until}. */
    record Sent(Participants.Result result, boolean inDoubt, Instant until) {
        static Sent inDoubt(Instant until) {
            return new Sent(null, true, until);
        }
    }

    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Sends the requests of round 1 that the calling thread does not send itself. Daemon threads, idle ones end. */
    private static final ExecutorService SENDERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "mongo2pc-round-one-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final Targets targets;
    private final Entries entries;
    private final Retrier retrier;
    private final CrashPoints crashPoints;

    RoundOne(Targets targets, Entries entries, Retrier retrier, CrashPoints crashPoints) {
        this.targets = targets;
        this.entries = entries;
        this.retrier = retrier;
        this.crashPoints = crashPoints;
    }

    /**
     * Sends the prepares of {@code tx}'s operations under {@code until} (with its nonce and
     * priority), and meanwhile runs {@code insert} (null: none) on this thread; returns each
     * prepare's result, in the order of the operations, and the insert's in {@code inserted}.
     */
    <T> Sent[] send(OwnedTransaction tx, Instant until, Supplier<T> insert, List<T> inserted) {
        Object txId = tx.id;
        String nonce = tx.nonce;
        Priority priority = tx.priority;
        List<Operation> ops = tx.ops;
        Map<List<String>, List<Integer>> groups = groups(ops);
        List<Future<WriteCombiner.Answer[]>> answers = new ArrayList<>();
        Map<Integer, Future<Sent>> exclusive = new LinkedHashMap<>();
        // With nothing else to send meanwhile, the last request goes from this thread: a hand-off to a
        // sender would only park this thread until the sender's answer woke it.
        boolean incrementsOnly = ops.stream().allMatch(op -> op instanceof Operation.Increment);
        int groupsLeft = groups.size();
        try {
            for (List<Integer> group : groups.values()) {
                List<UpdateOneModel<Document>> writes = new ArrayList<>();
                for (int i : group) {
                    crashPoints.before(Step.APPLY, i, txId);
                    writes.add(entries.prepareWrite((Operation.Increment) ops.get(i), txId, nonce, priority, until));
                }
                WriteCombiner combiner = targets.combiner(ops.get(group.get(0)).document());
                answers.add(--groupsLeft == 0 && insert == null && incrementsOnly ? inThisThread(combiner, writes)
                        : SENDERS.submit(() -> combiner.answers(writes)));
            }
            for (int i = 0; i < ops.size(); i++) {
                if (!(ops.get(i) instanceof Operation.Increment)) {
                    // An insert, update or delete: a request of its own, in parallel with the others.
                    crashPoints.before(Step.APPLY, i, txId);
                    Operation op = ops.get(i);
                    int index = i;
                    exclusive.put(i, SENDERS.submit(() -> alone(txId, () -> prepareAlone(op, index, txId, nonce, priority, until), until)));
                }
            }
            if (insert != null) {
                crashPoints.before(Step.INSERT, -1, txId);
                inserted.add(insert.get());
            }
        } catch (RuntimeException | Error e) {
            // This thread stops here (a crash point, an error): what was sent lands before it goes
            // on, as if the network had delivered it at once; a crash may leave it in any state.
            answers.forEach(answer -> await(answer, 0, txId));
            exclusive.values().forEach(answer -> awaitSent(answer, txId, until));
            throw e;
        }
        Sent[] sent = new Sent[ops.size()];
        try {
            collect(ops, groups, answers, exclusive, sent, txId, nonce, priority, until);
        } catch (RuntimeException | Error e) {
            // A crash point after a prepare: the exclusive writes handed over land before this thread goes on.
            exclusive.values().forEach(answer -> awaitSent(answer, txId, until));
            throw e;
        }
        return sent;
    }

    private void collect(List<Operation> ops, Map<List<String>, List<Integer>> groups, List<Future<WriteCombiner.Answer[]>> answers,
                         Map<Integer, Future<Sent>> exclusive, Sent[] sent, Object txId, String nonce, Priority priority,
                         Instant until) {
        int g = 0;
        for (List<Integer> group : groups.values()) {
            WriteCombiner.Answer[] answer = await(answers.get(g++), group.size(), txId);
            for (int k = 0; k < group.size(); k++) {
                int i = group.get(k);
                Operation op = ops.get(i);
                // Only a prepare not known to be in effect is sent again on its own (which also says why it was not).
                sent[i] = switch (answer[k]) {
                    case MATCHED -> new Sent(Participants.Result.DONE, false, until);
                    case IN_DOUBT -> Sent.inDoubt(until);
                    case NOT_KNOWN -> alone(txId, () -> prepareAlone(op, i, txId, nonce, priority, until), until);
                };
                sent[i] = after(sent[i], i, txId, until);
            }
        }
        for (Map.Entry<Integer, Future<Sent>> e : exclusive.entrySet()) {
            sent[e.getKey()] = after(awaitSent(e.getValue(), txId, until), e.getKey(), txId, until);
        }
    }

    /** The crash points after prepare {@code i}; a transient error there loses its answer: in doubt. */
    private Sent after(Sent sent, int i, Object txId, Instant until) {
        try {
            crashPoints.after(null, Step.APPLY, i, txId);
        } catch (MongoException e) {
            if (!Retrier.isTransient(e)) {
                throw e;
            }
            return Sent.inDoubt(until); // its answer lost: in doubt, as if the request had failed
        }
        return sent;
    }

    /**
     * The prepare of {@code op} (operation {@code index}) sent on its own: an increment's entry, or
     * an exclusive operation's lock; for an update, once taken, its change (round 1b) at once.
     */
    private Participants.Result prepareAlone(Operation op, int index, Object txId, String nonce, Priority priority, Instant until) {
        if (op instanceof Operation.Increment inc) {
            return entries.prepareAlone(inc, txId, nonce, priority, until);
        }
        MongoCollection<Document> coll = targets.collection(op.document());
        Exclusive.Take take = Exclusive.take(coll, op, txId, nonce, priority, until, entries.coordinator());
        if (!take.toChange()) {
            return take.result();
        }
        crashPoints.before(Step.CHANGE, index, txId);
        return crashPoints.after(Exclusive.change(coll, (Operation.Update) op, txId, nonce, until, take), Step.CHANGE, index, txId);
    }

    /** The indexes of the increments among {@code ops} by collection (target, database, collection), in order. */
    static Map<List<String>, List<Integer>> groups(List<Operation> ops) {
        Map<List<String>, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            if (!(ops.get(i) instanceof Operation.Increment)) {
                continue;
            }
            DocumentRef ref = ops.get(i).document();
            groups.computeIfAbsent(List.of(ref.target(), ref.database(), ref.collection()), k -> new ArrayList<>()).add(i);
        }
        return groups;
    }

    /** Prepare {@code index} of {@code tx} sent again on its own under {@code until}, with its crash points. */
    Sent resend(OwnedTransaction tx, int index, Instant until) {
        Object txId = tx.id;
        Operation op = tx.ops.get(index);
        crashPoints.before(Step.APPLY, index, txId);
        Sent sent = alone(txId, () -> prepareAlone(op, index, txId, tx.nonce, tx.priority, until), until);
        try {
            crashPoints.after(null, Step.APPLY, index, txId);
        } catch (MongoException e) {
            if (!Retrier.isTransient(e)) {
                throw e;
            }
            return Sent.inDoubt(until);
        }
        return sent;
    }

    /**
     * Runs a prepare on its own, repeated through errors that left nothing in flight (retried by
     * the Retrier); a request that failed without an answer is in doubt.
     */
    private Sent alone(Object txId, Supplier<Participants.Result> prepare, Instant until) {
        return retrier.call("prepare", txId, TransactionState.PENDING, () -> {
            try {
                return new Sent(prepare.get(), false, until);
            } catch (MongoException e) {
                if (Retrier.isInDoubt(e)) {
                    return Sent.inDoubt(until);
                }
                throw e;
            }
        });
    }

    private static Sent awaitSent(Future<Sent> sent, Object txId, Instant until) {
        try {
            return sent.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r && !(r instanceof MongoException)) {
                throw r; // a crash point or a bug: as if it had been thrown on this thread
            }
            return Sent.inDoubt(until); // failed for good after it may have been sent: in doubt, waited out
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while its prepares were sent",
                    txId, TransactionState.PENDING, e);
        }
    }

    /** The answer of each of the {@code writes} prepares of a group. */
    /** The answers of {@code writes} sent from this thread; a failure is an answer in doubt, as from a sender. */
    private static Future<WriteCombiner.Answer[]> inThisThread(WriteCombiner combiner, List<UpdateOneModel<Document>> writes) {
        try {
            return CompletableFuture.completedFuture(combiner.answers(writes));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static WriteCombiner.Answer[] await(Future<WriteCombiner.Answer[]> answer, int writes, Object txId) {
        try {
            return answer.get();
        } catch (ExecutionException e) {
            // the combiner answers without throwing: this is a bug, judged safely
            WriteCombiner.Answer[] inDoubt = new WriteCombiner.Answer[writes];
            Arrays.fill(inDoubt, WriteCombiner.Answer.IN_DOUBT);
            return inDoubt;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while its prepares were sent",
                    txId, TransactionState.PENDING, e);
        }
    }
}
