package io.mongo2pc.internal;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoException;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.CancelResult;
import io.mongo2pc.CrashHook;
import io.mongo2pc.CrashPoint;
import io.mongo2pc.CrashPoint.Step;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionCodec;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
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

    /** Settings the engine needs, resolved by the public builder. */
    public record Config(Targets targets, String database, String transactionsCollection, String application,
                         String owner, Duration lease, Duration maxClockSkew, Duration retryTimeout,
                         Duration conflictTimeout, int maxOperations, int maxMarkers,
                         CrashHook crashHook, TransactionMetrics metrics, List<TransactionCodec> codecs,
                         Supplier<Object> ids, boolean finishInBackground,
                         boolean twoRoundCommit) { }

    /** A transaction this process owns under {@code epoch}. */
    private static final class Owned {
        final Object id;
        final long epoch;
        final List<Operation> ops;
        final long startNanos = System.nanoTime();
        TransactionState state;
        String reason;
        ReasonCode code;
        /** Server time after which the server refuses this owner's participant writes. */
        Instant deadline;
        long stampedNanos;

        Owned(Object id, long epoch, List<Operation> ops, TransactionState state, String reason) {
            this.id = id;
            this.epoch = epoch;
            this.ops = ops;
            this.state = state;
            this.reason = reason;
        }
    }

    /**
     * Records a new {@code lastModified} stamp of an owned transaction. The write deadline is the
     * stamp plus the lease, less the clock skew allowed between servers: nobody takes the
     * transaction over before the stamp plus the lease, so every write that passes the deadline
     * check ran before any takeover.
     */
    private void stamped(Owned tx, Instant stamp) {
        tx.deadline = stamp.plus(config.lease()).minus(config.maxClockSkew());
        tx.stampedNanos = System.nanoTime();
    }

    private final Config config;
    private final TransactionStore store;
    private final Participants participants;
    private final ServerClock clock;
    private final Retrier retrier;
    private final CommittedReader committedReader;
    private final ConsistentCut consistentCut;
    private final WritesInDoubt writesInDoubt;
    private final Recovery recovery;
    private final Cancellation cancellation;
    private final Outcomes outcomes;
    /** The two-round commit: runs new transactions if configured; recovers and resolves its transactions always. */
    private final TwoRound twoRound;
    private final Sweep sweep;
    /** Tokens of this engine's writes: unique, without a call to the (synchronized) SecureRandom per transaction. */
    private final String tokenPrefix = UUID.randomUUID() + "-";
    private final AtomicLong tokens = new AtomicLong();

    private String newToken() {
        return tokenPrefix + tokens.incrementAndGet();
    }

    /** Group commit of inserts and state changes of the transactions collection. */
    private final WriteCombiner transactionWrites;
    /** Finishes (release, done) the transactions this process committed, if configured; else null. */
    private final Finisher<Owned> finisher;
    /**
     * The most committed transactions waiting to be finished before callers wait for the finisher:
     * at most half of maxMarkers, so that the markers they still hold cannot fill a document.
     */
    private static final int FINISH_QUEUE = 1024;
    /** The most transactions finished in one round of the finisher (two requests per collection). */
    private static final int FINISH_BATCH = 128;
    /** How long a round of the finisher waits for more transactions after its first. */
    private static final Duration FINISH_LINGER = Duration.ofMillis(Long.getLong("mongo2pc.finisher.lingerMillis", 5));

    public Engine(Config config) {
        this.config = config;
        MongoCollection<Document> transactions = config.targets()
                .collection(DocumentRef.DEFAULT_TARGET, config.database(), config.transactionsCollection());
        this.store = new TransactionStore(transactions);
        this.participants = new Participants(config.targets(), config.maxMarkers(),
                config.database() + "." + config.transactionsCollection());
        this.clock = new ServerClock(config.targets()
                .collection(DocumentRef.DEFAULT_TARGET, config.database(), config.transactionsCollection() + "_clock"));
        this.retrier = new Retrier(config.retryTimeout());
        this.committedReader = new CommittedReader(config.targets(), store, this::operationsOf);
        this.consistentCut = new ConsistentCut(config.targets(), store, committedReader, this::operationsOf);
        this.writesInDoubt = new WritesInDoubt(config.targets(), store, clock, retrier, config.lease(), config.maxClockSkew(),
                this::operationsOf);
        this.recovery = new Recovery(store, clock, retrier, writesInDoubt, this::takeOverAndDrive);
        this.cancellation = new Cancellation(store, clock, retrier, this::takeOverAndDrive, config.lease(), config.metrics());
        this.outcomes = new Outcomes(store, clock, retrier, this::operationsOf, this::takeOverAndDrive, config.lease());
        this.transactionWrites = config.targets()
                .combiner(DocumentRef.DEFAULT_TARGET, config.database(), config.transactionsCollection());
        Entries entries = new Entries(config.targets(), config.maxMarkers(), participants.coordinator());
        Resolver resolver = new Resolver(store, clock, config.maxClockSkew(), participants.coordinator(), config.crashHook());
        this.sweep = new Sweep(config.targets(), config.targets().collection(DocumentRef.DEFAULT_TARGET, config.database(),
                config.transactionsCollection() + "_participants"), resolver);
        this.twoRound = new TwoRound(new TwoRoundContext(config, config.targets(), store, clock, retrier, writesInDoubt,
                transactionWrites, entries, resolver, sweep, this::newToken),
                (id, ops) -> outcomes.ofExisting(id, ops, config.lease().plus(config.retryTimeout())));
        this.finisher = config.finishInBackground()
                ? new Finisher<>("mongo2pc-finisher-" + config.owner(), this::finishAll,
                        Math.max(1, Math.min(FINISH_QUEUE, config.maxMarkers() / 2)), FINISH_BATCH, FINISH_LINGER)
                : null;
    }

    /**
     * Waits until every transaction handed to the background finisher is done (or, after an error,
     * left to recovery); false if {@code timeout} passed first. True at once without a finisher.
     */
    public boolean awaitFinished(Duration timeout) {
        return (finisher == null || finisher.awaitIdle(timeout)) && twoRound.finish().awaitIdle(timeout);
    }

    /** Stops the background finisher after what it holds, waiting up to {@code timeout}; false if some is left to recovery. */
    public boolean close(Duration timeout) {
        boolean closed = finisher == null || finisher.close(timeout);
        return twoRound.finish().close(timeout) && closed;
    }

    /** The document as of the last committed transaction; empty if it does not exist in that view. */
    public Optional<Document> readCommitted(DocumentRef ref) {
        return retrier.call("read committed", null, null, () -> committedReader.read(ref));
    }

    /** Several documents as one consistent cut of the last committed transactions, found within {@code timeout} (see ConsistentCut). */
    public List<Optional<Document>> readCommitted(List<DocumentRef> refs, Duration timeout) {
        return retrier.call("read committed", null, null, () -> consistentCut.read(refs, timeout));
    }

    /** The document as stored, work in flight and the library's fields included. */
    public Optional<Document> read(DocumentRef ref) {
        return retrier.call("read", null, null, () -> Optional.ofNullable(config.targets().collection(ref)
                .find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first()));
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
    public TransactionOutcome run(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        requireOpen();
        Object id = idFor(requestedId);
        validate(ops, config.maxOperations(), id);
        Document doc = newDocument(fields, ops, storeOps, PENDING)
                .append(Fields.APPLICATION, config.application())
                .append(Fields.OWNER, config.owner())
                .append(Fields.EPOCH, 1L)
                .append(Fields.LEASE_MS, config.lease().toMillis());
        if (config.twoRoundCommit()) {
            return twoRound.run(id, ops, doc);
        }
        Owned tx = new Owned(id, 1L, ops, PENDING, null);
        Instant stamp = insert(id, doc);
        if (stamp == null) {
            // The id was used before: the same transaction (a retry) ends as the first call's did.
            return outcomes.ofExisting(id, ops, config.lease().plus(config.retryTimeout()));
        }
        stamped(tx, stamp);
        return drive(tx, true);
    }

    /** Writes a new {@code initial} transaction for any worker to claim; returns its id. */
    public Object submit(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        Object id = idFor(requestedId);
        if (config.twoRoundCommit()) {
            throw new InvalidTransactionException("queued transactions (submit) are not run by the two-round commit"
                    + " (twoRoundCommit); run them with run, or submit them with a manager built without it", id);
        }
        validate(ops, config.maxOperations(), id);
        if (insert(id, newDocument(fields, ops, storeOps, INITIAL)) == null) {
            outcomes.requireSame(id, ops);
        }
        return id;
    }

    /** The caller's id, checked, or a new one. */
    private Object idFor(Object requested) {
        if (requested == null) {
            return config.ids().get();
        }
        DocumentRef.requirePlainId(requested, "transaction id");
        return requested;
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

    /** Inserts a new transaction document; returns its lastModified stamp (server time), or null if the id is taken. */
    private Instant insert(Object id, Document doc) {
        String token = newToken();
        doc.append(Fields.TOKEN, token);
        hook(CrashPoint.before(Step.INSERT, -1), id);
        Document stored = retrier.call("insert", id, null, () -> afterWrite(insertOnce(id, doc), Step.INSERT, -1, id));
        // Our own insert (perhaps retried after a lost acknowledgement) carries our token.
        if (stored == null || !token.equals(stored.get(Fields.TOKEN))) {
            return null;
        }
        config.metrics().started();
        return TransactionStore.stamped(stored);
    }

    /**
     * Inserts {@code doc} unless its id exists; returns the stored {@code lastModified} and
     * {@code token}. Sent with other threads' writes when it can be (the answer then says only
     * that it inserted, and the stamp is a lower bound of the server's clock taken before sending);
     * if that answer is not known, the single-request upsert returns what is stored.
     */
    private Document insertOnce(Object id, Document doc) {
        Instant sentAfter = clock.lowerBound();
        if (transactionWrites.write(TransactionStore.insertWrite(id, doc))) {
            return new Document(Fields.LAST_MODIFIED, Date.from(sentAfter)).append(Fields.TOKEN, doc.get(Fields.TOKEN));
        }
        try {
            return store.insert(id, doc);
        } catch (MongoServerException e) {
            if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
            return store.find(id); // another caller's upsert of the same id won the race
        }
    }

    /** Claims one queued transaction and drives it; empty if none was waiting. */
    public Optional<TransactionOutcome> claimAndRun() {
        requireOpen();
        hook(CrashPoint.before(Step.CLAIM, -1), null);
        String token = newToken();
        AtomicBoolean tried = new AtomicBoolean();
        Document claimed = retrier.call("claim", null, INITIAL, () -> {
            // a retry: the first try may have claimed one whose answer was lost; that one is ours
            Document ours = tried.getAndSet(true) ? store.claimedWith(token) : null;
            return ours != null ? ours : store.claim(config.application(), config.owner(), config.lease().toMillis(), token);
        });
        if (claimed == null) {
            return Optional.empty();
        }
        Object id = claimed.get(Fields.ID);
        hook(CrashPoint.after(Step.CLAIM, -1), id);
        Owned tx;
        try {
            List<Operation> ops = operationsOf(claimed);
            validate(ops, config.maxOperations(), id);
            tx = new Owned(id, 1L, ops, PENDING, null);
            stamped(tx, TransactionStore.stamped(claimed));
        } catch (InvalidTransactionException | IllegalStateException e) {
            // Nothing was applied yet (it was only queued): refuse it for good, with the reason.
            tx = new Owned(id, 1L, List.of(), PENDING, null);
            stamped(tx, TransactionStore.stamped(claimed));
            tx.reason = "invalid transaction: " + e.getMessage();
            move(tx, CANCELING, Step.BEGIN_CANCEL, reasonOf(tx));
        }
        return Optional.of(drive(tx, true));
    }

    /** A manager whose background finisher is closed starts nothing more (refused before any write). */
    private void requireOpen() {
        if (finisher != null && finisher.isClosed()) {
            throw new IllegalStateException("this transaction manager is closed (" + config.owner() + ")");
        }
    }

    // ---- the state machine -----------------------------------------------------------------

    /**
     * Drives {@code tx} to its end; with {@code ownCall} and a background finisher, only to its
     * commit point: it is then handed to the finisher and the outcome says {@code applied}.
     */
    private TransactionOutcome drive(Owned tx, boolean ownCall) {
        boolean inBackground = ownCall && finisher != null;
        while (!tx.state.isTerminal() && !(inBackground && tx.state == APPLIED)) {
            switch (tx.state) {
                case PENDING -> {
                    Participants.Result refusal = applyAll(tx);
                    if (refusal == null) {
                        move(tx, APPLIED, Step.COMMIT, null);
                    } else {
                        tx.reason = refusal.reason();
                        tx.code = refusal.code();
                        move(tx, CANCELING, Step.BEGIN_CANCEL, reasonOf(tx));
                    }
                }
                case APPLIED -> finish(tx);
                case CANCELING -> {
                    // Undo only what is in effect: the marker says which participants were applied.
                    for (int i = tx.ops.size() - 1; i >= 0; i--) {
                        Operation op = tx.ops.get(i);
                        participantWrite(tx, Step.UNDO, i, deadline -> participants.undo(op, tx.id, deadline));
                    }
                    move(tx, CANCELED, Step.FINISH_CANCEL, null);
                }
                default -> throw new IllegalStateException("transaction " + tx.id + " cannot be driven from " + tx.state);
            }
        }
        if (tx.state == APPLIED) {
            if (finisher.offer(tx)) {
                // From here on tx is the finisher's thread's (which counts it once done): do not read it.
                return new TransactionOutcome(tx.id, APPLIED, null);
            }
            // Closed (or interrupted) while handing over: past the commit point, so finish it here.
            try {
                finish(tx);
            } catch (MongoException | TransactionException e) {
                if (!config.finishInBackground()) {
                    throw e;
                }
                // This caller expects the commit point (applied): it is reached, and an interrupt or
                // a database error while finishing must not read as a failure a caller might retry
                // (and so pay twice). Recovery finishes it once its lease runs out.
                log.warn("transaction {} committed; finishing it failed ({}), recovery will finish it", tx.id, e.toString());
                return new TransactionOutcome(tx.id, APPLIED, null);
            }
        }
        counted(tx);
        return new TransactionOutcome(tx.id, tx.state, tx.reason, tx.code);
    }

    /** The reason fields of a cancel: the text, and the code when there is one. */
    private static Document reasonOf(Owned tx) {
        Document reason = new Document(Fields.REASON, tx.reason);
        return tx.code == null ? reason : reason.append(Fields.CODE, tx.code.name());
    }

    /** Metrics of a transaction this process drove to its end. */
    private void counted(Owned tx) {
        if (tx.state == CANCELED) {
            config.metrics().canceled(tx.reason);
        } else if (tx.state == DONE) {
            config.metrics().committed(Duration.ofNanos(System.nanoTime() - tx.startNanos));
        }
    }

    /** After the commit point: releases every marker, then moves to done. */
    private void finish(Owned tx) {
        boolean released = batchable(tx)
                && batch(tx, Step.RELEASE, deadline -> participants.releaseIncrements(increments(tx), tx.id, deadline));
        for (int i = 0; i < tx.ops.size() && !released; i++) {
            Operation op = tx.ops.get(i);
            participantWrite(tx, Step.RELEASE, i, deadline -> participants.release(op, tx.id, deadline));
        }
        move(tx, DONE, Step.FINISH, null);
    }

    /**
     * The background finisher's round: the release writes of many committed transactions in one
     * request per collection, then their moves to done in one request. These are the same fenced,
     * idempotent writes as {@link #finish}'s; a transaction whose writes are not all known to have
     * matched (an error, a lost acknowledgement, a takeover) is finished on its own by
     * {@link #finish}, which tells why. A crash point that throws anything else stops that
     * transaction where it is, as a crash of this process would, and leaves it to recovery.
     */
    private void finishAll(List<Owned> batch) {
        List<Owned> alone = new ArrayList<>();
        Map<List<String>, List<Owned>> byCollection = new LinkedHashMap<>();
        for (Owned tx : batch) {
            if (batchable(tx)) {
                DocumentRef first = tx.ops.get(0).document();
                byCollection.computeIfAbsent(List.of(first.target(), first.database(), first.collection()),
                        k -> new ArrayList<>()).add(tx);
            } else {
                alone.add(tx);
            }
        }
        List<Owned> released = new ArrayList<>();
        for (List<Owned> group : byCollection.values()) {
            List<Owned> sent = new ArrayList<>();
            List<UpdateOneModel<Document>> writes = new ArrayList<>();
            for (Owned tx : group) {
                if (reached(tx, Step.RELEASE, CrashPoint.Phase.BEFORE, alone)) {
                    writes.addAll(Participants.releaseWrites(increments(tx), tx.id, tx.deadline));
                    sent.add(tx);
                }
            }
            boolean matched = !sent.isEmpty() && allMatched(config.targets().collection(sent.get(0).ops.get(0).document()), writes);
            for (Owned tx : sent) {
                if (!matched) {
                    alone.add(tx);
                } else if (reached(tx, Step.RELEASE, CrashPoint.Phase.AFTER, alone)) {
                    released.add(tx);
                }
            }
        }
        List<Owned> moving = new ArrayList<>();
        List<UpdateOneModel<Document>> moves = new ArrayList<>();
        for (Owned tx : released) {
            if (reached(tx, Step.FINISH, CrashPoint.Phase.BEFORE, alone)) {
                moves.add(TransactionStore.moveWrite(tx.id, tx.epoch, APPLIED, DONE, null));
                moving.add(tx);
            }
        }
        boolean moved = !moving.isEmpty() && allMatched(store.collection(), moves);
        for (Owned tx : moving) {
            if (!moved) {
                alone.add(tx);
            } else if (reached(tx, Step.FINISH, CrashPoint.Phase.AFTER, alone)) {
                tx.state = DONE;
                counted(tx);
            }
        }
        for (Owned tx : alone) {
            try {
                finish(tx);
                counted(tx);
            } catch (LeaseLostException e) {
                log.info("transaction {} was finished by another process: {}", tx.id, e.getMessage());
            } catch (RuntimeException e) {
                log.warn("transaction {} is committed but not finished; recovery will finish it: {}", tx.id, e.toString());
            }
        }
    }

    /**
     * Runs the crash points of {@code step} in {@code phase} for a transaction the finisher holds
     * and renews its lease if due; false if something threw: a transient error (an acknowledgement
     * lost) sends it to {@code alone}, anything else leaves it to recovery.
     */
    private boolean reached(Owned tx, Step step, CrashPoint.Phase phase, List<Owned> alone) {
        try {
            if (phase == CrashPoint.Phase.BEFORE) {
                renewIfDue(tx);
            }
            if (step == Step.FINISH) {
                hook(phase == CrashPoint.Phase.BEFORE ? CrashPoint.before(step, -1) : CrashPoint.after(step, -1), tx.id);
            } else {
                for (int i = 0; i < tx.ops.size(); i++) {
                    hook(phase == CrashPoint.Phase.BEFORE ? CrashPoint.before(step, i) : CrashPoint.after(step, i), tx.id);
                }
            }
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
    private static boolean allMatched(MongoCollection<Document> collection, List<UpdateOneModel<Document>> writes) {
        try {
            return collection.bulkWrite(writes, new BulkWriteOptions().ordered(false))
                    .getMatchedCount() == writes.size();
        } catch (MongoException e) {
            log.debug("finishing {} writes on {} failed: {}", writes.size(), collection.getNamespace(), e.toString());
            return false;
        }
    }

    /** Applies every operation; returns null if all are in effect, else why one cannot be. */
    private Participants.Result applyAll(Owned tx) {
        // One by one, in order, never batched: a later write must not be in effect (a credit that
        // others could spend) before an earlier one's guard (the debit's) has held.
        for (int i = 0; i < tx.ops.size(); i++) {
            Operation op = tx.ops.get(i);
            Participants.Result result = participantWrite(tx, Step.APPLY, i, deadline -> participants.apply(op, tx.id, deadline));
            if (result.kind() == Participants.Kind.REFUSED || result.kind() == Participants.Kind.BUSY) {
                return result;
            }
        }
        return null;
    }

    /** The most writes sent in one request; larger transactions go one by one, renewing their lease between. */
    private static final int MAX_BATCH = 8;

    /** A transfer's shape: a few increments, all in one collection, so one request can carry them all. */
    private static boolean batchable(Owned tx) {
        if (tx.ops.size() < 2 || tx.ops.size() > MAX_BATCH) {
            return false;
        }
        DocumentRef first = tx.ops.get(0).document();
        for (Operation op : tx.ops) {
            DocumentRef ref = op.document();
            if (!(op instanceof Operation.Increment) || !ref.target().equals(first.target())
                    || !ref.database().equals(first.database()) || !ref.collection().equals(first.collection())) {
                return false;
            }
        }
        return true;
    }

    private static List<Operation.Increment> increments(Owned tx) {
        return tx.ops.stream().map(Operation.Increment.class::cast).toList();
    }

    /**
     * The writes of {@code step} for every operation in one request, with the crash points of each
     * around it. True if all matched; false sends the caller to the one-by-one path, which settles
     * whatever this left (every write is idempotent).
     */
    private boolean batch(Owned tx, Step step, Function<Instant, Boolean> write) {
        renewIfDue(tx);
        Instant deadline = tx.deadline;
        for (int i = 0; i < tx.ops.size(); i++) {
            hook(CrashPoint.before(step, i), tx.id);
        }
        return retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, tx.state, () -> {
            boolean all = write.apply(deadline);
            for (int i = 0; i < tx.ops.size(); i++) {
                hook(CrashPoint.after(step, i), tx.id);
            }
            return all;
        });
    }

    /**
     * One participant write under the owner's deadline. A write the server refused because the
     * deadline passed is repeated after renewing the lease (or this owner stops: someone took
     * over); a document full of markers is waited for, with backoff, up to the conflict timeout.
     */
    private Participants.Result participantWrite(Owned tx, Step step, int participant,
                                                 Function<Instant, Participants.Result> write) {
        long busySince = 0;
        long backoffMs = 5;
        int expired = 0;
        while (true) {
            renewIfDue(tx);
            Instant deadline = tx.deadline;
            hook(CrashPoint.before(step, participant), tx.id);
            Participants.Result result = retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, tx.state,
                    () -> afterWrite(writesInDoubt.settled(step, tx.ops.get(participant), participant, tx.id, deadline,
                            () -> write.apply(deadline)), step, participant, tx.id));
            switch (result.kind()) {
                case EXPIRED -> {
                    if (++expired > 3) {
                        // Refused even right after renewals: the lease is too short for this write's latency.
                        config.metrics().leaseLost();
                        throw new LeaseLostException("transaction " + tx.id + ": " + step.name().toLowerCase(Locale.ROOT)
                                + " missed the owner's deadline " + expired + " times in a row; the lease "
                                + config.lease().toMillis() + "ms is too short for the database's latency", tx.id, tx.state);
                    }
                    renew(tx);
                }
                case BUSY -> {
                    long now = System.nanoTime();
                    busySince = busySince == 0 ? now : busySince;
                    if (now - busySince > config.conflictTimeout().toNanos()) {
                        config.metrics().conflict();
                        return result;
                    }
                    sleep(backoffMs, tx);
                    backoffMs = Math.min(200, backoffMs * 2);
                }
                default -> {
                    return result;
                }
            }
        }
    }

    private static void sleep(long millis, Owned tx) {
        try {
            Thread.sleep(millis + ThreadLocalRandom.current().nextLong(millis + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + tx.id + ": interrupted while waiting for a busy document",
                    tx.id, tx.state, e);
        }
    }

    /**
     * The AFTER crash point runs inside the retried step: a transient error thrown there is a write
     * applied whose acknowledgement was lost, and the retry must recognise it.
     */
    private <T> T afterWrite(T result, Step step, int participant, Object id) {
        hook(CrashPoint.after(step, participant), id);
        return result;
    }

    /** The one place a stored state changes: compare-and-set on state and epoch. */
    private void move(Owned tx, TransactionState to, Step step, Document extra) {
        TransactionState from = tx.state;
        hook(CrashPoint.before(step, -1), tx.id);
        Instant stamp = retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, from,
                () -> afterWrite(moveOnce(tx, from, to, extra), step, -1, tx.id));
        if (stamp == null) {
            Document current = retrier.call("read", tx.id, from, () -> store.find(tx.id));
            boolean ackLost = current != null && TransactionStore.stateOf(current) == to
                    && TransactionStore.epochOf(current) == tx.epoch;
            if (ackLost) {
                stamp = TransactionStore.stamped(current);
            } else {
                config.metrics().leaseLost();
                throw new LeaseLostException("transaction " + tx.id + ": expected state " + from.stored() + " under epoch "
                        + tx.epoch + " to move to " + to.stored() + ", found "
                        + (current == null ? "no transaction" : "state " + current.get(Fields.STATE) + " epoch "
                        + current.get(Fields.EPOCH) + " owner " + current.get(Fields.OWNER)), tx.id, from);
            }
        }
        tx.state = to;
        stamped(tx, stamp);
    }

    /**
     * The compare-and-set of {@link #move}, sent with other threads' writes when it can be: if
     * it is known to have matched, the stamp is a lower bound of the server's clock taken before
     * sending (so the write deadline derived from it is never later than the real one); else the
     * single-request compare-and-set returns the stamp, or null if it does not match (perhaps
     * because the combined one did: the caller reads the document to tell).
     */
    private Instant moveOnce(Owned tx, TransactionState from, TransactionState to, Document extra) {
        Instant sentAfter = clock.lowerBound();
        if (transactionWrites.write(TransactionStore.moveWrite(tx.id, tx.epoch, from, to, extra))) {
            return sentAfter;
        }
        return store.move(tx.id, tx.epoch, from, to, extra);
    }

    /** Long transactions stamp lastModified between state changes so their lease does not run out. */
    private void renewIfDue(Owned tx) {
        if (System.nanoTime() - tx.stampedNanos >= config.lease().toNanos() / 3) {
            renew(tx);
        }
    }

    private void renew(Owned tx) {
        Instant stamp = retrier.call("renew", tx.id, tx.state, () -> store.renew(tx.id, tx.epoch, tx.state));
        if (stamp == null) {
            config.metrics().leaseLost();
            throw new LeaseLostException("transaction " + tx.id + " was taken over while its owner " + config.owner()
                    + " held it under epoch " + tx.epoch + " in state " + tx.state.stored(), tx.id, tx.state);
        }
        stamped(tx, stamp);
    }

    // ---- recovery --------------------------------------------------------------------------

    /** One recovery pass (see {@link Recovery#recover}). */
    public RecoveryReport recover(Duration olderThan) {
        RecoveryReport report = recovery.recover(olderThan);
        // Markers of two-round transactions whose document was never written: found by no scan of transactions.
        int swept = retrier.call("sweep", null, null, sweep::sweep);
        if (swept > 0) {
            log.info("recovery resolved {} markers of two-round transactions met in participant collections", swept);
        }
        return report;
    }

    /** Takes {@code seen} over and drives it; with {@code cancelReason}, a pending one is canceled instead (see {@link TakeOver}). */
    private Optional<TransactionOutcome> takeOverAndDrive(Document seen, Instant staleBefore, String cancelReason) {
        Object id = seen.get(Fields.ID);
        List<Operation> ops;
        try {
            ops = operationsOf(seen);
            // Stored by anyone (a tutorial app, a hand edit): check as strictly as a new one, but
            // not against this instance's size limit, which may be lower than its creator's.
            validate(ops, Integer.MAX_VALUE, id);
        } catch (RuntimeException e) {
            throw new UnreadableTransactionException("transaction " + id + " cannot be taken over: " + e.getMessage(), id, e);
        }
        hook(CrashPoint.before(Step.TAKEOVER, -1), id);
        // A token of this attempt: two threads of one manager share its owner name, so only the
        // token tells our own takeover (acknowledgement lost, then retried) from a sibling's.
        String token = newToken();
        Document taken = retrier.call("takeover", id, TransactionStore.stateOf(seen),
                () -> afterWrite(store.takeOver(seen, staleBefore, config.application(), config.owner(), config.lease().toMillis(), token),
                        Step.TAKEOVER, -1, id));
        if (taken == null) {
            Document current = retrier.call("read", id, null, () -> store.find(id));
            if (current != null && token.equals(current.get(Fields.TOKEN))) {
                taken = current;
            }
        }
        if (taken == null) {
            config.metrics().conflict();
            return Optional.empty();
        }
        config.metrics().takeover();
        if (TwoRound.follows(taken)) {
            return twoRound.driveTakenOver(taken, ops, cancelReason);
        }
        writesInDoubt.noteInserts(id, ops);
        Owned tx = new Owned(id, TransactionStore.epochOf(taken), ops, TransactionStore.stateOf(taken), taken.getString(Fields.REASON));
        tx.code = ReasonCode.parse(taken.get(Fields.CODE)).orElse(null);
        stamped(tx, TransactionStore.stamped(taken));
        try {
            if (cancelReason != null && tx.state == PENDING) {
                // Every operation in effect: nothing can refuse it any more, and undoing a credit that
                // others may have spent could overdraw. It commits instead (the outcome says so).
                if (!participants.allApplied(tx.ops, tx.id)) {
                    tx.reason = cancelReason;
                    tx.code = ReasonCode.CANCELED_BY_OPERATOR;
                    move(tx, CANCELING, Step.BEGIN_CANCEL, reasonOf(tx));
                }
            }
            TransactionOutcome outcome = drive(tx, false);
            config.metrics().recovered(outcome.state());
            return Optional.of(outcome);
        } catch (LeaseLostException e) {
            log.info("lost transaction {} to another process during recovery: {}", id, e.getMessage());
            return Optional.empty();
        }
    }

    // ---- operator actions ------------------------------------------------------------------

    /** Cancels a transaction before its commit point (see {@link Cancellation}). */
    public CancelResult cancel(Object id, String reason) {
        return cancellation.cancel(id, reason);
    }

    public Optional<TransactionView> inspect(Object id) {
        return outcomes.view(id);
    }

    /** The outcome of {@code id} once decided, finishing it if its owner is gone (see {@link Outcomes#await}). */
    public Optional<TransactionOutcome> awaitOutcome(Object id, Duration timeout) {
        return outcomes.await(id, timeout);
    }

    /** Deletes terminal transactions not modified for {@code olderThan}; returns how many. */
    public long prune(Duration olderThan) {
        Instant before = retrier.call("read clock", null, null, clock::now).minus(olderThan);
        return retrier.call("prune", null, null, () -> store.collection().deleteMany(
                new Document(Fields.STATE, new Document("$in", TransactionStore.terminal()))
                        .append(Fields.LAST_MODIFIED, TransactionStore.notAfter(before))).getDeletedCount());
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
        List<String> open = new ArrayList<>();
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
    private void validate(List<Operation> ops, int maxOperations, Object id) {
        try {
            Validation.check(ops, config.targets().names(), maxOperations);
        } catch (InvalidTransactionException e) {
            throw new InvalidTransactionException(e.getMessage(), id); // nothing written; the caller knows which call
        }
        for (int i = 0; i < ops.size(); i++) {
            DocumentRef ref = ops.get(i).document();
            if (ref.target().equals(DocumentRef.DEFAULT_TARGET) && ref.database().equals(config.database())
                    && (ref.collection().equals(config.transactionsCollection())
                    || ref.collection().equals(config.transactionsCollection() + "_clock"))) {
                throw new InvalidTransactionException("operation " + i + " on " + ref + ": the collection "
                        + ref.collection() + " belongs to the transaction coordinator and cannot be changed by an operation", id);
            }
        }
    }

    private void hook(CrashPoint point, Object id) {
        config.crashHook().reached(point, id);
    }
}
