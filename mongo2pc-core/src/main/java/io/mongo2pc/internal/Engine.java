package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.CrashHook;
import io.mongo2pc.CrashPoint;
import io.mongo2pc.CrashPoint.Step;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionCodec;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.CANCELED;
import static io.mongo2pc.TransactionState.CANCELING;
import static io.mongo2pc.TransactionState.DONE;
import static io.mongo2pc.TransactionState.INITIAL;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * Drives transactions through the protocol. A transaction this process owns is moved to a
 * terminal state by {@link #drive}; every write is preceded and followed by a crash point, every
 * state change is a compare-and-set under the owner's epoch. Thread-safe: one engine serves any
 * number of threads, each driving its own transactions.
 */
public final class Engine {
    private static final Logger log = LoggerFactory.getLogger(Engine.class);
    private static final int RECOVERY_BATCH = 500;

    /** Settings the engine needs, resolved by the public builder. */
    public record Config(Targets targets, String database, String transactionsCollection, String application,
                         String owner, Duration lease, Duration retryTimeout, int maxOperations,
                         CrashHook crashHook, TransactionMetrics metrics, List<TransactionCodec> codecs,
                         Supplier<Object> ids) { }

    /** A transaction this process owns under {@code epoch}. */
    private static final class Owned {
        final Object id;
        final long epoch;
        final List<Operation> ops;
        final long startNanos = System.nanoTime();
        TransactionState state;
        String reason;
        long stampedNanos = System.nanoTime();
        /** Taken over from another owner, who may still write late: leave fences where we finish. */
        boolean fenced;

        Owned(Object id, long epoch, List<Operation> ops, TransactionState state, String reason) {
            this.id = id;
            this.epoch = epoch;
            this.ops = ops;
            this.state = state;
            this.reason = reason;
        }
    }

    private final Config config;
    private final TransactionStore store;
    private final Participants participants;
    private final ServerClock clock;
    private final Retrier retrier;

    public Engine(Config config) {
        this.config = config;
        MongoCollection<Document> transactions = config.targets()
                .collection(io.mongo2pc.DocumentRef.DEFAULT_TARGET, config.database(), config.transactionsCollection());
        this.store = new TransactionStore(transactions);
        this.participants = new Participants(config.targets());
        this.clock = new ServerClock(config.targets()
                .collection(io.mongo2pc.DocumentRef.DEFAULT_TARGET, config.database(), config.transactionsCollection() + "_clock"));
        this.retrier = new Retrier(config.retryTimeout());
    }

    public MongoCollection<Document> transactions() {
        return store.collection();
    }

    // ---- starting transactions -------------------------------------------------------------

    /**
     * Writes a new transaction owned by this process as {@code pending} and drives it to its end.
     * {@code fields} are stored beside the protocol's (e.g. a transfer's source, destination,
     * value); {@code storeOps} false leaves the operations to be read back by a codec from them.
     */
    public TransactionOutcome run(List<Operation> ops, Document fields, boolean storeOps) {
        validate(ops, config.maxOperations());
        Object id = config.ids().get();
        Document doc = newDocument(fields, ops, storeOps, PENDING)
                .append(Fields.APPLICATION, config.application())
                .append(Fields.OWNER, config.owner())
                .append(Fields.EPOCH, 1L);
        insert(id, doc);
        return drive(new Owned(id, 1L, ops, PENDING, null));
    }

    /** Writes a new {@code initial} transaction for any worker to claim; returns its id. */
    public Object submit(List<Operation> ops, Document fields, boolean storeOps) {
        validate(ops, config.maxOperations());
        Object id = config.ids().get();
        insert(id, newDocument(fields, ops, storeOps, INITIAL));
        return id;
    }

    private Document newDocument(Document fields, List<Operation> ops, boolean storeOps, TransactionState state) {
        Document doc = new Document();
        if (fields != null) {
            doc.putAll(fields);
        }
        doc.append(Fields.STATE, state.stored());
        if (storeOps) {
            doc.append(Fields.OPS, OperationCodec.encode(ops));
        }
        return doc;
    }

    private void insert(Object id, Document doc) {
        hook(CrashPoint.before(Step.INSERT, -1), id);
        boolean created = retrier.call("insert", id, null, () -> store.insert(id, doc));
        if (!created) {
            Document existing = store.find(id);
            // Our own insert whose acknowledgement was lost looks exactly like what we wrote.
            boolean ours = existing != null && doc.get(Fields.STATE).equals(existing.get(Fields.STATE))
                    && java.util.Objects.equals(doc.get(Fields.OWNER), existing.get(Fields.OWNER));
            if (!ours) {
                throw new InvalidTransactionException("a transaction with id " + id + " already exists");
            }
        }
        hook(CrashPoint.after(Step.INSERT, -1), id);
        config.metrics().started();
    }

    /** Claims one queued transaction and drives it; empty if none was waiting. */
    public Optional<TransactionOutcome> claimAndRun() {
        hook(CrashPoint.before(Step.CLAIM, -1), null);
        Document claimed = retrier.call("claim", null, INITIAL, () -> store.claim(config.application(), config.owner()));
        if (claimed == null) {
            return Optional.empty();
        }
        Object id = claimed.get(Fields.ID);
        hook(CrashPoint.after(Step.CLAIM, -1), id);
        Owned tx;
        try {
            List<Operation> ops = operationsOf(claimed);
            validate(ops, config.maxOperations());
            tx = new Owned(id, 1L, ops, PENDING, null);
        } catch (InvalidTransactionException | IllegalStateException e) {
            // Nothing was applied yet (it was only queued): refuse it for good, with the reason.
            tx = new Owned(id, 1L, List.of(), PENDING, null);
            tx.reason = "invalid transaction: " + e.getMessage();
            move(tx, CANCELING, Step.BEGIN_CANCEL, new Document(Fields.REASON, tx.reason));
        }
        return Optional.of(drive(tx));
    }

    // ---- the state machine -----------------------------------------------------------------

    private TransactionOutcome drive(Owned tx) {
        while (!tx.state.isTerminal()) {
            switch (tx.state) {
                case PENDING -> {
                    Participants.Refusal refusal = applyAll(tx);
                    if (refusal == null) {
                        move(tx, APPLIED, Step.COMMIT, null);
                    } else {
                        tx.reason = refusal.reason();
                        move(tx, CANCELING, Step.BEGIN_CANCEL, new Document(Fields.REASON, tx.reason));
                    }
                }
                case APPLIED -> {
                    for (int i = 0; i < tx.ops.size(); i++) {
                        Operation op = tx.ops.get(i);
                        write(tx, Step.RELEASE, i, () -> {
                            participants.release(op, tx.id, tx.fenced);
                            return null;
                        });
                    }
                    move(tx, DONE, Step.FINISH, null);
                }
                case CANCELING -> {
                    // Undo only what is in effect: the marker says which participants were applied.
                    for (int i = tx.ops.size() - 1; i >= 0; i--) {
                        Operation op = tx.ops.get(i);
                        write(tx, Step.UNDO, i, () -> participants.undo(op, tx.id, tx.fenced));
                    }
                    move(tx, CANCELED, Step.FINISH_CANCEL, null);
                }
                default -> throw new IllegalStateException("transaction " + tx.id + " cannot be driven from " + tx.state);
            }
        }
        Duration latency = Duration.ofNanos(System.nanoTime() - tx.startNanos);
        if (tx.state == DONE) {
            config.metrics().committed(latency);
        } else {
            config.metrics().canceled(tx.reason);
        }
        return new TransactionOutcome(tx.id, tx.state, tx.reason);
    }

    private Participants.Refusal applyAll(Owned tx) {
        for (int i = 0; i < tx.ops.size(); i++) {
            Operation op = tx.ops.get(i);
            renewIfDue(tx);
            Participants.Refusal refusal = write(tx, Step.APPLY, i, () -> participants.apply(op, tx.id));
            if (refusal != null) {
                return refusal;
            }
        }
        return null;
    }

    private <T> T write(Owned tx, Step step, int participant, Supplier<T> write) {
        hook(CrashPoint.before(step, participant), tx.id);
        T result = retrier.call(step.name().toLowerCase(java.util.Locale.ROOT), tx.id, tx.state, write);
        hook(CrashPoint.after(step, participant), tx.id);
        return result;
    }

    /** The one place a stored state changes: compare-and-set on state and epoch. */
    private void move(Owned tx, TransactionState to, Step step, Document extra) {
        TransactionState from = tx.state;
        hook(CrashPoint.before(step, -1), tx.id);
        boolean moved = retrier.call(step.name().toLowerCase(java.util.Locale.ROOT), tx.id, from,
                () -> store.move(tx.id, tx.epoch, from, to, extra));
        if (!moved) {
            Document current = retrier.call("read", tx.id, from, () -> store.find(tx.id));
            boolean ackLost = current != null && TransactionStore.stateOf(current) == to
                    && TransactionStore.epochOf(current) == tx.epoch;
            if (!ackLost) {
                config.metrics().leaseLost();
                throw new LeaseLostException("transaction " + tx.id + ": expected state " + from.stored() + " under epoch "
                        + tx.epoch + " to move to " + to.stored() + ", found "
                        + (current == null ? "no transaction" : "state " + current.get(Fields.STATE) + " epoch "
                        + current.get(Fields.EPOCH) + " owner " + current.get(Fields.OWNER)), tx.id, from);
            }
        }
        hook(CrashPoint.after(step, -1), tx.id);
        tx.state = to;
        tx.stampedNanos = System.nanoTime();
    }

    /** Long transactions stamp lastModified between state changes so their lease does not run out. */
    private void renewIfDue(Owned tx) {
        if (System.nanoTime() - tx.stampedNanos < config.lease().toNanos() / 3) {
            return;
        }
        boolean renewed = retrier.call("renew", tx.id, tx.state, () -> store.collection().updateOne(
                new Document(Fields.ID, tx.id).append(Fields.STATE, TransactionStore.in(tx.state)).append(Fields.EPOCH, tx.epoch),
                new Document("$currentDate", new Document(Fields.LAST_MODIFIED, true))).getMatchedCount() == 1);
        if (!renewed) {
            config.metrics().leaseLost();
            throw new LeaseLostException("transaction " + tx.id + " was taken over while its owner " + config.owner()
                    + " was applying it (epoch " + tx.epoch + ")", tx.id, tx.state);
        }
        tx.stampedNanos = System.nanoTime();
    }

    // ---- recovery --------------------------------------------------------------------------

    /**
     * One pass over open transactions not modified for {@code olderThan} (judged by the server's
     * clock): each is taken over (epoch + 1) and driven to its end: {@code pending} and
     * {@code applied} roll forward, {@code canceling} finishes its undo.
     */
    public RecoveryReport recover(Duration olderThan) {
        Instant staleBefore = retrier.call("read clock", null, null, clock::now).minus(olderThan);
        List<Document> stale = retrier.call("find stale", null, null,
                () -> store.stale(List.of(PENDING, APPLIED, CANCELING), staleBefore, RECOVERY_BATCH));
        int rolledForward = 0;
        int canceled = 0;
        int skipped = 0;
        for (Document seen : stale) {
            Optional<TransactionOutcome> outcome = takeOverAndDrive(seen, null);
            if (outcome.isEmpty()) {
                skipped++;
            } else if (outcome.get().isDone()) {
                rolledForward++;
            } else {
                canceled++;
            }
        }
        return new RecoveryReport(rolledForward, canceled, skipped);
    }

    /** Takes {@code seen} over and drives it; with {@code cancelReason}, a pending one is canceled instead. */
    private Optional<TransactionOutcome> takeOverAndDrive(Document seen, String cancelReason) {
        Object id = seen.get(Fields.ID);
        List<Operation> ops;
        try {
            ops = operationsOf(seen);
            // Stored by anyone (a tutorial app, a hand edit): check as strictly as a new one, but
            // not against this instance's size limit, which may be lower than its creator's.
            validate(ops, Integer.MAX_VALUE);
        } catch (RuntimeException e) {
            log.warn("cannot recover transaction {}: {}", id, e.getMessage());
            return Optional.empty();
        }
        hook(CrashPoint.before(Step.TAKEOVER, -1), id);
        Document taken = retrier.call("takeover", id, TransactionStore.stateOf(seen),
                () -> store.takeOver(seen, config.application(), config.owner()));
        if (taken == null) {
            config.metrics().conflict();
            return Optional.empty();
        }
        hook(CrashPoint.after(Step.TAKEOVER, -1), id);
        config.metrics().takeover();
        Owned tx = new Owned(id, TransactionStore.epochOf(taken), ops, TransactionStore.stateOf(taken), taken.getString(Fields.REASON));
        // Only an owner that honours fences (mongo2pc, epoch >= 1) can write late; a tutorial app would not.
        tx.fenced = tx.epoch >= 2;
        try {
            if (cancelReason != null && tx.state == PENDING) {
                tx.reason = cancelReason;
                move(tx, CANCELING, Step.BEGIN_CANCEL, new Document(Fields.REASON, cancelReason));
            }
            TransactionOutcome outcome = drive(tx);
            config.metrics().recovered(outcome.state());
            return Optional.of(outcome);
        } catch (LeaseLostException e) {
            log.info("lost transaction {} to another process during recovery: {}", id, e.getMessage());
            return Optional.empty();
        }
    }

    // ---- operator actions ------------------------------------------------------------------

    /**
     * Cancels a transaction that has not reached its commit point: a queued one at once, a
     * pending one only once its owner's lease has expired (a live owner is never overtaken).
     */
    public TransactionOutcome cancel(Object id, String reason) {
        for (int attempt = 0; attempt < 10; attempt++) {
            Document doc = retrier.call("read", id, null, () -> store.find(id));
            if (doc == null) {
                throw new InvalidTransactionException("no transaction with id " + id);
            }
            TransactionState state = TransactionStore.stateOf(doc);
            switch (state) {
                case INITIAL -> {
                    if (retrier.call("cancel", id, state, () -> store.cancelQueued(id, reason))) {
                        config.metrics().canceled(reason);
                        return new TransactionOutcome(id, CANCELED, reason);
                    }
                }
                case CANCELED -> {
                    return new TransactionOutcome(id, CANCELED, doc.getString(Fields.REASON));
                }
                case APPLIED, DONE -> throw new TransactionException("transaction " + id + " is " + state.stored()
                        + ": it is past its commit point and can only be rolled forward", id, state);
                case PENDING, CANCELING -> {
                    Instant now = retrier.call("read clock", id, state, clock::now);
                    Date modified = doc.getDate(Fields.LAST_MODIFIED);
                    if (modified != null && modified.toInstant().isAfter(now.minus(config.lease()))) {
                        throw new TransactionException("transaction " + id + " is " + state.stored() + " and owned by "
                                + doc.get(Fields.OWNER) + " whose lease runs until "
                                + modified.toInstant().plus(config.lease()) + " (server time now " + now
                                + "); cancel it after that, or let it finish", id, state);
                    }
                    Optional<TransactionOutcome> outcome = takeOverAndDrive(doc, reason);
                    if (outcome.isPresent()) {
                        return outcome.get();
                    }
                }
                default -> throw new IllegalStateException("unexpected state " + state);
            }
        }
        throw new TransactionException("transaction " + id + " kept changing while being canceled", id, null);
    }

    public Optional<Document> inspect(Object id) {
        return Optional.ofNullable(retrier.call("read", id, null, () -> store.find(id)));
    }

    /** Deletes terminal transactions not modified for {@code olderThan}; returns how many. */
    public long prune(Duration olderThan) {
        Instant before = retrier.call("read clock", null, null, clock::now).minus(olderThan);
        List<String> terminal = new java.util.ArrayList<>(DONE.spellings());
        terminal.addAll(CANCELED.spellings());
        Document filter = new Document(Fields.STATE, new Document("$in", terminal))
                // The whole millisecond: the embedded server stores stamps below it (see TransactionStore.stale).
                .append(Fields.LAST_MODIFIED, new Document("$lt", Date.from(before.plusMillis(1))));
        // Transactions finished by a new owner left fences on their participants: remove them first.
        List<Object> keep = new java.util.ArrayList<>();
        List<Document> fenced = retrier.call("find fenced", null, null, () -> store.collection()
                .find(new Document(filter).append(Fields.EPOCH, new Document("$gte", 2L)))
                .projection(com.mongodb.client.model.Projections.exclude("__none")).into(new java.util.ArrayList<>()));
        for (Document tx : fenced) {
            Object id = tx.get(Fields.ID);
            try {
                for (Operation op : operationsOf(tx)) {
                    retrier.call("remove fence", id, null, () -> {
                        participants.removeFence(op, id);
                        return null;
                    });
                }
            } catch (RuntimeException e) {
                log.warn("kept transaction {}: cannot remove its fences: {}", id, e.getMessage());
                keep.add(id);
            }
        }
        Document delete = keep.isEmpty() ? filter : new Document(filter).append(Fields.ID, new Document("$nin", keep));
        return retrier.call("prune", null, null, () -> store.collection().deleteMany(delete).getDeletedCount());
    }

    /** How many transactions are in each state. */
    public Map<TransactionState, Long> counts() {
        Map<TransactionState, Long> counts = new EnumMap<>(TransactionState.class);
        for (TransactionState state : TransactionState.values()) {
            counts.put(state, retrier.call("count", null, null,
                    () -> store.collection().countDocuments(new Document(Fields.STATE, TransactionStore.in(state)))));
        }
        return counts;
    }

    /** How long the least recently modified open transaction has waited, by the server's clock. */
    public Duration oldestOpen() {
        List<String> open = new java.util.ArrayList<>();
        for (TransactionState s : TransactionState.open()) {
            open.addAll(s.spellings());
        }
        Document oldest = retrier.call("find oldest", null, null, () -> store.collection()
                .find(new Document(Fields.STATE, new Document("$in", open)))
                .projection(new Document(Fields.LAST_MODIFIED, 1))
                .sort(new Document(Fields.LAST_MODIFIED, 1)).limit(1).first());
        if (oldest == null) {
            return Duration.ZERO;
        }
        Date modified = oldest.getDate(Fields.LAST_MODIFIED);
        if (modified == null) {
            return Duration.ZERO;
        }
        Instant now = retrier.call("read clock", null, null, clock::now);
        Duration age = Duration.between(modified.toInstant(), now);
        return age.isNegative() ? Duration.ZERO : age;
    }

    /** Server time now. */
    public Instant serverTime() {
        return retrier.call("read clock", null, null, clock::now);
    }

    private List<Operation> operationsOf(Document transaction) {
        List<Document> stored = transaction.getList(Fields.OPS, Document.class);
        if (stored != null) {
            return OperationCodec.decode(stored);
        }
        for (TransactionCodec codec : config.codecs()) {
            Optional<List<Operation>> ops = codec.operations(transaction, config.database());
            if (ops.isPresent()) {
                return ops.get();
            }
        }
        throw new IllegalStateException("transaction " + transaction.get(Fields.ID)
                + " has no operations mongo2pc can read (no 'ops' field and no codec recognises it)");
    }

    /** Validation.check, and no operation on the coordinator's own documents (transactions, clock). */
    private void validate(List<Operation> ops, int maxOperations) {
        Validation.check(ops, config.targets().names(), maxOperations);
        for (int i = 0; i < ops.size(); i++) {
            io.mongo2pc.DocumentRef ref = ops.get(i).document();
            if (ref.target().equals(io.mongo2pc.DocumentRef.DEFAULT_TARGET) && ref.database().equals(config.database())
                    && (ref.collection().equals(config.transactionsCollection())
                    || ref.collection().equals(config.transactionsCollection() + "_clock"))) {
                throw new InvalidTransactionException("operation " + i + " on " + ref + ": the collection "
                        + ref.collection() + " belongs to the transaction coordinator and cannot be changed by an operation");
            }
        }
    }

    private void hook(CrashPoint point, Object id) {
        config.crashHook().reached(point, id);
    }
}
