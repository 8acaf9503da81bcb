package io.mongo2pc.internal;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoServerException;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.recovery.Outcomes;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.state.Tokens;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.tutorial.Coordinator;
import io.mongo2pc.internal.tutorial.Finishing;
import io.mongo2pc.internal.tutorial.OwnerWrites;
import io.mongo2pc.internal.tworound.TwoRound;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.mongo2pc.TransactionState.INITIAL;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * Starting transactions: a new one written as {@code pending} and driven by its caller, a new one
 * queued as {@code initial}, and a queued one claimed by a worker. A retried id is the same
 * transaction, never a second one. Thread-safe.
 */
final class Starter {
    private final TransactionManagerSettings settings;
    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final WriteCombiner transactionWrites;
    private final StoredOperations operations;
    private final OwnerWrites writes;
    private final Coordinator coordinator;
    private final Finishing finishing;
    private final Outcomes outcomes;
    private final CrashPoints crashPoints;
    private final Tokens tokens;
    /** Runs new transactions by the two-round commit if configured; else null. */
    private final TwoRound twoRound;

    Starter(TransactionManagerSettings settings, TransactionStore store, ServerClock clock, Retrier retrier,
            WriteCombiner transactionWrites, StoredOperations operations, OwnerWrites writes, Coordinator coordinator,
            Finishing finishing, Outcomes outcomes, CrashPoints crashPoints, Tokens tokens, TwoRound twoRound) {
        this.settings = settings;
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.transactionWrites = transactionWrites;
        this.operations = operations;
        this.writes = writes;
        this.coordinator = coordinator;
        this.finishing = finishing;
        this.outcomes = outcomes;
        this.crashPoints = crashPoints;
        this.tokens = tokens;
        this.twoRound = twoRound;
    }

    /** See {@link Engine#run}. */
    TransactionOutcome run(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        requireOpen();
        Object id = idFor(requestedId);
        operations.validateNew(ops, settings.maxOperations(), id);
        Document doc = newDocument(fields, ops, storeOps, PENDING, started())
                .append(Fields.APPLICATION, settings.application())
                .append(Fields.OWNER, settings.owner())
                .append(Fields.EPOCH, 1L)
                .append(Fields.LEASE_MS, settings.lease().toMillis());
        if (settings.twoRoundCommit() && (!settings.tutorialRulesFallback() || TwoRound.runs(ops, id))) {
            return twoRound.run(id, ops, doc);
        }
        // The tutorial's rules: configured, or (by default) a transaction the two-round commit cannot run yet.
        OwnedTransaction tx = new OwnedTransaction(id, 1L, ops, PENDING, null);
        Instant stamp = insert(id, doc);
        if (stamp == null) {
            // The id was used before: the same transaction (a retry) ends as the first call's did.
            return outcomes.ofExisting(id, ops, settings.lease().plus(settings.retryTimeout()));
        }
        writes.stamped(tx, stamp);
        return coordinator.drive(tx, true);
    }

    /** See {@link Engine#submit}. */
    Object submit(Object requestedId, List<Operation> ops, Document fields, boolean storeOps) {
        Object id = idFor(requestedId);
        operations.validateNew(ops, settings.maxOperations(), id);
        Document doc = newDocument(fields, ops, storeOps, INITIAL, started());
        if (settings.twoRoundCommit() && TwoRound.runs(ops, id)) {
            TwoRound.queued(id, doc); // whoever claims it drives it by the two-round rules
        }
        if (insert(id, doc) == null) {
            outcomes.requireSame(id, ops);
        }
        return id;
    }

    /** Claims one queued transaction and drives it; empty if none was waiting. */
    Optional<TransactionOutcome> claimAndRun() {
        requireOpen();
        Transition claim = Transition.INITIAL_TO_PENDING;
        crashPoints.reach(claim, CrashPoint.Phase.BEFORE, null);
        String token = tokens.next();
        AtomicBoolean tried = new AtomicBoolean();
        Document claimed = retrier.call(claim.label(), null, INITIAL, () -> {
            // a retry: the first try may have claimed one whose answer was lost; that one is ours
            Document ours = tried.getAndSet(true) ? store.claimedWith(token) : null;
            return ours != null ? ours : store.claim(settings.application(), settings.owner(), settings.lease().toMillis(), token);
        });
        if (claimed == null) {
            return Optional.empty();
        }
        Object id = claimed.get(Fields.ID);
        crashPoints.reach(claim, CrashPoint.Phase.AFTER, id);
        OwnedTransaction tx;
        try {
            List<Operation> ops = operations.of(claimed);
            operations.validateNew(ops, settings.maxOperations(), id);
            tx = new OwnedTransaction(id, 1L, ops, PENDING, null);
            writes.stamped(tx, TransactionStore.stamped(claimed));
        } catch (InvalidTransactionException | IllegalStateException e) {
            // Nothing was applied yet (it was only queued): refuse it for good, with the reason.
            tx = new OwnedTransaction(id, 1L, List.of(), PENDING, null);
            writes.stamped(tx, TransactionStore.stamped(claimed));
            tx.reason = "invalid transaction: " + e.getMessage();
            writes.move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
        }
        if (TwoRoundFields.follows(claimed)) {
            // Queued by a two-round manager: driven by those rules, whatever this manager's setting.
            tx.nonce = claimed.getString(TwoRoundFields.NONCE);
            return Optional.of(tx.state == PENDING ? twoRound.runClaimed(tx) : twoRound.finish().drive(tx, true));
        }
        return Optional.of(coordinator.drive(tx, true));
    }

    /** A manager whose background finisher is closed starts nothing more (refused before any write). */
    private void requireOpen() {
        if (finishing.isClosed()) {
            throw new IllegalStateException("this transaction manager is closed (" + settings.owner() + ")");
        }
    }

    /** The caller's id, checked, or a new one. */
    private Object idFor(Object requested) {
        if (requested == null) {
            return settings.ids().get();
        }
        DocumentRef.requirePlainId(requested, "transaction id");
        return requested;
    }

    /**
     * When a transaction is asked for, by this process's reading of the server's clock (the one its
     * deadline is counted from): the start of its commit latency, read from the collection by anyone.
     */
    private Date started() {
        return Date.from(retrier.call("read clock", null, null, clock::lowerBound));
    }

    private static Document newDocument(Document fields, List<Operation> ops, boolean storeOps, TransactionState state,
                                        Date started) {
        Document doc = new Document();
        if (fields != null) {
            doc.putAll(fields);
        }
        doc.append(Fields.STATE, state.stored()).append(Fields.STARTED_AT, started);
        if (storeOps) {
            doc.append(Fields.OPS, OperationCodec.encode(ops));
        }
        return doc;
    }

    /** Inserts a new transaction document; returns its lastModified stamp (server time), or null if the id is taken. */
    private Instant insert(Object id, Document doc) {
        String token = tokens.next();
        doc.append(Fields.TOKEN, token);
        crashPoints.before(Step.INSERT, -1, id);
        Document stored = retrier.call("insert", id, null, () -> crashPoints.after(insertOnce(id, doc), Step.INSERT, -1, id));
        // Our own insert (perhaps retried after a lost acknowledgement) carries our token.
        if (stored == null || !token.equals(stored.get(Fields.TOKEN))) {
            return null;
        }
        settings.metrics().started();
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
}
