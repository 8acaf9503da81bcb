package io.mongo2pc.internal;

import com.mongodb.client.model.Projections;
import io.mongo2pc.CancelResult;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.PruneResult;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.internal.admin.AdminQueries;
import io.mongo2pc.internal.admin.Pruning;
import io.mongo2pc.internal.admin.TransactionListing;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.interactive.TwoRoundAccess;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.reads.CommittedReader;
import io.mongo2pc.internal.reads.ConsistentCut;
import io.mongo2pc.internal.reads.RollForward;
import io.mongo2pc.internal.recovery.Cancellation;
import io.mongo2pc.internal.recovery.Outcomes;
import io.mongo2pc.internal.recovery.Recovery;
import io.mongo2pc.internal.recovery.TakeOver;
import io.mongo2pc.internal.recovery.TakeOverAndDrive;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.state.Tokens;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.tutorial.Coordinator;
import io.mongo2pc.internal.tutorial.Finishing;
import io.mongo2pc.internal.tutorial.OwnerWrites;
import io.mongo2pc.internal.tutorial.WritesInDoubt;
import io.mongo2pc.internal.tworound.Resolver;
import io.mongo2pc.internal.tworound.Sweep;
import io.mongo2pc.internal.tworound.TwoRound;
import io.mongo2pc.internal.tworound.TwoRoundContext;
import io.mongo2pc.internal.wire.DocumentsById;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.internal.wire.WriteCombiner;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The coordinator behind {@link io.mongo2pc.TransactionManager}: wires its rooms together and
 * answers the manager's calls. A transaction starts in {@link Starter}, is driven by
 * {@link Coordinator} through the writes of {@link OwnerWrites} (each state change a
 * {@link Transition}), is finished by {@link Finishing}, and, if its owner is gone, is taken over
 * by {@link TakeOverAndDrive} for {@link Recovery}, {@link Cancellation} or {@link Outcomes}.
 * Reads go through {@link CommittedReader} and {@link ConsistentCut}; counts through {@link AdminQueries},
 * prune through {@link Pruning}. Thread-safe: one engine serves any number of threads, each driving its
 * own transactions.
 */
public final class Engine {
    private final Targets targets;
    private final TransactionStore store;
    private final Retrier retrier;
    private final Finishing finishing;
    private final Starter starter;
    private final CommittedReader committedReader;
    /** How long a document that keeps changing under a single read is then read for as a cut of one. */
    private final Duration cutTimeout;
    private final ConsistentCut consistentCut;
    private final Recovery recovery;
    private final Cancellation cancellation;
    private final Outcomes outcomes;
    private final AdminQueries admin;
    private final Pruning pruning;
    private final DocumentsById documentsById;
    private final TransactionListing listing;
    /** The two-round commit: runs new transactions if configured; recovers and resolves its transactions always. */
    private final TwoRound twoRound;
    private final Sweep sweep;
    /** Finishes, off the readers' path, committed two-round transactions whose markers readers met. */
    private final RollForward rollForward;
    /** How long a call whose id is taken waits for that transaction's outcome. */
    private final Duration waitForExisting;
    /** What interactive transactions use of the two-round commit. */
    private final TwoRoundAccess twoRoundAccess;

    public Engine(TransactionManagerSettings settings) {
        this.waitForExisting = settings.lease().plus(settings.retryTimeout());
        this.cutTimeout = settings.conflictTimeout();
        this.targets = new Targets(settings.targets(), settings.writeConcern(), settings.readConcern(),
                settings.combinedRequestsInFlight());
        String database = settings.database();
        String collection = settings.transactionsCollection();
        this.documentsById = new DocumentsById(targets, settings.combinedRequestsInFlight());
        this.store = new TransactionStore(targets.collection(DocumentRef.DEFAULT_TARGET, database, collection),
                documentsById.wholeOf(DocumentRef.DEFAULT_TARGET, database, collection));
        ServerClock clock = new ServerClock(targets.collection(DocumentRef.DEFAULT_TARGET, database, collection + "_clock"));
        this.retrier = new Retrier(settings.retryTimeout(), settings.clock());
        CrashPoints crashPoints = new CrashPoints(settings.crashHook());
        Tokens tokens = new Tokens();
        StoredOperations operations = new StoredOperations(settings, targets);
        Participants participants = new Participants(targets, settings.maxMarkers(), database + "." + collection);
        WritesInDoubt writesInDoubt = new WritesInDoubt(targets, store, clock, retrier, settings.lease(),
                settings.maxClockSkew(), operations::of);
        WriteCombiner transactionWrites = targets.combiner(DocumentRef.DEFAULT_TARGET, database, collection);
        OwnerWrites writes = new OwnerWrites(settings, store, clock, retrier, writesInDoubt, transactionWrites, crashPoints);
        this.finishing = new Finishing(settings, targets, store, participants, writes, crashPoints);
        Coordinator coordinator = new Coordinator(participants, writes, finishing, settings.metrics());
        Resolver resolver = new Resolver(store, clock, settings.maxClockSkew(), participants.coordinator(), settings.crashHook());
        this.sweep = new Sweep(targets, targets.collection(DocumentRef.DEFAULT_TARGET, database, collection + "_participants"),
                resolver, settings.sweepPeriod());
        this.twoRound = new TwoRound(new TwoRoundContext(settings, targets, store, clock, retrier, writesInDoubt,
                transactionWrites, writes, crashPoints, tokens,
                new Entries(targets, settings.maxMarkers(), participants.coordinator()), resolver, sweep),
                this::existing);
        TakeOver takeOver = new TakeOverAndDrive(settings, store, retrier, operations, writesInDoubt, participants, writes,
                coordinator, crashPoints, tokens, twoRound);
        this.recovery = new Recovery(store, clock, retrier, writesInDoubt, takeOver);
        this.cancellation = new Cancellation(store, clock, retrier, takeOver, settings.lease(), settings.metrics());
        this.outcomes = new Outcomes(store, clock, retrier, operations::of, takeOver, settings.lease(), settings.clock());
        this.starter = new Starter(settings, store, clock, retrier, transactionWrites, operations, writes, coordinator,
                finishing, outcomes, crashPoints, tokens, twoRound);
        this.rollForward = new RollForward(targets, store, operations::of, settings.crashHook(), settings.owner());
        this.committedReader = new CommittedReader(documentsById, store, operations::of, rollForward::met);
        this.consistentCut = new ConsistentCut(documentsById, store, committedReader, operations::of, settings.clock());
        this.admin = new AdminQueries(store, clock, retrier);
        this.pruning = new Pruning(store, admin, retrier, settings.lease(), settings.maxClockSkew());
        this.listing = new TransactionListing(store.collection(), admin::serverTime, settings.codecs(), database);
        this.twoRoundAccess = new TwoRoundAccess(twoRound, committedReader, consistentCut, outcomes, operations);
    }

    /** The two-round commit as interactive transactions use it. Public for the API (TransactionManager builds the interactive room with it). */
    public TwoRoundAccess twoRoundAccess() {
        return twoRoundAccess;
    }

    /** True once this manager was closed: it starts nothing more. Public for the API (TransactionManager builds the interactive room with it). */
    public boolean closed() {
        return finishing.isClosed();
    }

    /** The outcome of a transaction whose id a new one found taken (the same transaction, run again). */
    private TransactionOutcome existing(Object id, List<Operation> ops) {
        return outcomes.ofExisting(id, ops, waitForExisting);
    }

    // ---- starting transactions (see Starter) -----------------------------------------------

    /**
     * Writes a new transaction owned by this process as {@code pending} and drives it to its end.
     * {@code fields} are stored beside the protocol's (e.g. a transfer's source, destination,
     * value); {@code storeOps} false leaves the operations to be read back by a codec from them.
     */
    public TransactionOutcome run(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        return starter.run(requestedId, ops, fields, storeOps);
    }

    /** Writes a new {@code initial} transaction for any worker to claim; returns its id. */
    public Object submit(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        return starter.submit(requestedId, ops, fields, storeOps);
    }

    /** Claims one queued transaction and drives it; empty if none was waiting. */
    public Optional<TransactionOutcome> claimAndRun() {
        return starter.claimAndRun();
    }

    // ---- background finishing (see Finishing) ----------------------------------------------

    /**
     * Waits until every transaction handed to the background finisher is done (or, after an error,
     * left to recovery); false if {@code timeout} passed first. True at once without a finisher.
     */
    public boolean awaitFinished(Duration timeout) {
        return finishing.awaitIdle(timeout) && twoRound.finish().awaitIdle(timeout);
    }

    /** Stops the background finisher after what it holds, waiting up to {@code timeout}; false if some is left to recovery. */
    public boolean close(Duration timeout) {
        boolean closed = finishing.close(timeout);
        closed = twoRound.finish().close(timeout) && closed;
        rollForward.close(Duration.ZERO); // best effort: what it holds is found again by readers and recovery
        return closed;
    }

    // ---- reads -----------------------------------------------------------------------------

    /**
     * The document as of the last committed transaction; empty if it does not exist in that view. One
     * that keeps changing under the reads is read as a cut of one, which judges its changes.
     */
    public Optional<Document> readCommitted(DocumentRef ref) {
        return retrier.call("read committed", null, null, () -> {
            try {
                return committedReader.read(ref);
            } catch (CommittedReader.KeepsChanging e) {
                return consistentCut.read(List.of(ref), cutTimeout).get(0);
            }
        });
    }

    /** Several documents as one consistent cut of the last committed transactions, found within {@code timeout} (see ConsistentCut). */
    public List<Optional<Document>> readCommitted(List<DocumentRef> refs, Duration timeout) {
        return retrier.call("read committed", null, null, () -> consistentCut.read(refs, timeout));
    }

    /** The document as stored, work in flight and the library's fields included. */
    public Optional<Document> read(DocumentRef ref) {
        return retrier.call("read", null, null, () -> Optional.ofNullable(targets.collection(ref)
                .find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first()));
    }

    /** The stored documents of {@code ids} in a collection, with {@code fields} (see {@link DocumentsById}). */
    public List<Document> readByIds(String target, String database, String collection, List<Object> ids, List<String> fields) {
        return retrier.call("read", null, null, () -> documentsById.read(target, database, collection, ids, fields));
    }

    // ---- recovery and operator actions -----------------------------------------------------

    /** One recovery pass (see {@link Recovery#recover}). */
    public RecoveryReport recover(Duration olderThan, Duration leaseIfNone) {
        RecoveryReport report = recovery.recover(olderThan, leaseIfNone);
        // Markers of two-round transactions whose document was never written: found by no scan of
        // transactions. Those it cancels (behind a tombstone) count as canceled by this pass, and
        // the late copies of inserts it deletes as removed by it.
        if (sweep.due()) {
            report = report.plus(retrier.call("sweep", null, null, sweep::sweep));
        }
        return report;
    }

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

    // ---- admin queries (see AdminQueries) --------------------------------------------------

    /** Prunes finished transactions not modified for {@code olderThan} (see {@link Pruning}). */
    public PruneResult prune(Duration olderThan, PruneOptions options) {
        return pruning.prune(olderThan, options);
    }

    /** How many transactions are in each state. */
    public Map<TransactionState, Long> counts() {
        return admin.counts();
    }

    /** How long the least recently modified open transaction has waited, by the server's clock. */
    public Duration oldestOpen() {
        return admin.oldestOpen();
    }

    /** Server time now. */
    public Instant serverTime() {
        return admin.serverTime();
    }

    /** A page of transactions, newest first (see {@link TransactionListing}). */
    public TransactionPage list(TransactionQuery query) {
        return listing.list(query);
    }

    /** How many transactions match {@code query} (see {@link TransactionListing#count}). */
    public long count(TransactionQuery query) {
        return retrier.call("count", null, null, () -> listing.count(query));
    }

    /** Records on transaction {@code id} that {@code by} did {@code action}; false if there is no such transaction. */
    public boolean note(Object id, String action, String by) {
        Instant at = admin.serverTime();
        return retrier.call("note", id, null, () -> store.note(id, action, by, at));
    }

    /** The oldest open transaction, if any (see {@link TransactionListing#oldestOpen}). */
    public Optional<TransactionView> oldestOpenTransaction() {
        return listing.oldestOpen();
    }
}
