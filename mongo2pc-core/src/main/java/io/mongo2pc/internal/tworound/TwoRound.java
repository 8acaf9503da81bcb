package io.mongo2pc.internal.tworound;

import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.FailedOperations;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiFunction;

import static io.mongo2pc.internal.format.TwoRoundFields.INSERTED_AT;
import static io.mongo2pc.internal.format.TwoRoundFields.absent;
import static io.mongo2pc.internal.format.TwoRoundFields.NONCE;
import static io.mongo2pc.internal.format.TwoRoundFields.PROTOCOL;
import static io.mongo2pc.internal.format.TwoRoundFields.RULES;
import static io.mongo2pc.internal.format.TwoRoundFields.UNTIL;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * The owner's side of the two-round commit (docs/TWO-ROUND.md): round
 * 1 sends the insert of the transaction document and every prepare at once, round 2 is the commit
 * compare-and-set; releases follow ({@link TwoRoundFinish}). Runs every kind of operation:
 * increments hold and mark ({@link Entries}), inserts, updates and deletes lock ({@link Exclusive}).
 * Also drives a two-round transaction taken over by recovery. Thread-safe.
 * Public for the recovery and interactive packages and Engine, as are the members they use.
 */
public final class TwoRound {
    private static final Logger log = LoggerFactory.getLogger(TwoRound.class);
    private enum Insert { OURS, ABANDONED, TAKEN_OVER, OTHER }

    private final TwoRoundContext c;
    private final RoundOne roundOne;
    private final TwoRoundDecision decision;
    private final TwoRoundFinish finish;
    private final CommitInsert commitInsert;
    /** The outcome of an id another transaction holds (the caller's own id run again). */
    private final BiFunction<Object, List<Operation>, TransactionOutcome> existing;

    public TwoRound(TwoRoundContext c, BiFunction<Object, List<Operation>, TransactionOutcome> existing) {
        this.c = c;
        this.roundOne = new RoundOne(c.targets(), c.entries(), c.retrier(), c.crashPoints());
        this.finish = new TwoRoundFinish(c);
        this.decision = new TwoRoundDecision(c, roundOne, finish);
        this.commitInsert = new CommitInsert(c, finish, existing);
        this.existing = existing;
    }

    public TwoRoundFinish finish() {
        return finish;
    }

    public TwoRoundContext context() {
        return c;
    }

    public CommitInsert commitInsert() {
        return commitInsert;
    }

    /**
     * True if the two-round commit can run a transaction under {@code id} (one an entry can be named
     * after); a manager with the fallback setting runs the others by the tutorial's rules.
     */
    public static boolean runs(List<Operation> ops, Object id) {
        return EntryName.supports(id);
    }

    /** Writes {@code doc} (a new pending transaction owned by this process) and drives it (see the class comment). */
    public TransactionOutcome run(Object id, List<Operation> ops, Document doc) {
        register(id, ops);
        OwnedTransaction tx = new OwnedTransaction(id, 1L, ops, PENDING, null);
        tx.nonce = UUID.randomUUID().toString();
        Instant start = c.retrier().call("read clock", id, null, c.clock()::lowerBound);
        tx.priority = new Priority(start, tx.nonce);
        Instant until = start.plus(c.settings().lease()).minus(c.settings().maxClockSkew());
        tx.deadline = until;
        tx.insertedBefore = until;
        tx.stampedNanos = System.nanoTime();
        String token = c.tokens().next();
        doc.append(Fields.TOKEN, token).append(NONCE, tx.nonce).append(PROTOCOL, RULES).append(UNTIL, Date.from(until));
        if (c.settings().commitInsert()) {
            RoundOne.Sent[] sent = roundOne.send(tx, until, null, new ArrayList<>());
            if (allInEffect(sent)) {
                return commitInsert.run(tx, doc, token);
            }
            // A prepare refused, busy, expired or in doubt: today's rules from here, the pending
            // document inserted after round 1 (one of the orders round 1's parallel writes may land in).
            c.crashPoints().before(Step.INSERT, -1, id);
            return afterInsert(tx, sent, insert(tx, doc, token), until);
        }
        List<Insert> inserted = new ArrayList<>(1);
        RoundOne.Sent[] sent = roundOne.send(tx, until, () -> insert(tx, doc, token), inserted);
        return afterInsert(tx, sent, inserted.get(0), until);
    }

    private static boolean allInEffect(RoundOne.Sent[] sent) {
        for (RoundOne.Sent s : sent) {
            if (s.inDoubt() || s.result().kind() != Participants.Kind.DONE) {
                return false;
            }
        }
        return true;
    }

    /** Goes on from round 1 and the insert of the pending document. */
    private TransactionOutcome afterInsert(OwnedTransaction tx, RoundOne.Sent[] sent, Insert inserted, Instant until) {
        Object id = tx.id;
        switch (inserted) {
            case OURS -> {
                c.settings().metrics().started();
                decision.decide(tx, sent, until);
                return finish.drive(tx, true);
            }
            case ABANDONED -> {
                // A resolver found our prepares without a document past until + skew: none can land any more.
                finish.undoAll(tx, false); // by the nonce alone
                return tx.timedOut("abandoned: no transaction document before its deadline " + until, c.settings().metrics());
            }
            case TAKEN_OVER -> throw new LeaseLostException("transaction " + id + " was taken over before its owner "
                    + c.settings().owner() + " knew its document was written", id, PENDING);
            default -> {
                // The id is another transaction's: take ours back once nothing of ours can still land.
                for (RoundOne.Sent s : sent) {
                    if (s.inDoubt()) {
                        c.writesInDoubt().awaitPassedEverywhere(s.until(), id);
                    }
                }
                finish.undoAll(tx, false); // by the nonce alone
                return existing.apply(id, tx.ops);
            }
        }
    }

    /** Marks {@code doc}, a queued transaction about to be inserted {@code initial}, as one of these rules. */
    public static void queued(Object id, Document doc) {
        doc.append(NONCE, UUID.randomUUID().toString()).append(PROTOCOL, RULES);
    }

    /**
     * Drives a queued transaction this worker has just claimed ({@code tx}: pending, epoch 1, its
     * deadline from the claim's stamp, its nonce): its document exists, so round 1 is the prepares
     * alone, then the commit (no late-insert condition: there was no insert).
     */
    public TransactionOutcome runClaimed(OwnedTransaction tx) {
        register(tx.id, tx.ops);
        c.settings().metrics().started();
        // its priority: the claim (the deadline is the claim's stamp + lease - skew)
        tx.priority = new Priority(tx.deadline.minus(c.settings().lease()).plus(c.settings().maxClockSkew()), tx.nonce);
        RoundOne.Sent[] sent = roundOne.send(tx, tx.deadline, null, new ArrayList<>());
        decision.decide(tx, sent, null);
        return finish.drive(tx, true);
    }

    /** Records the collections of {@code ops} for the sweep, before anything is prepared there. */
    private void register(Object id, List<Operation> ops) {
        for (Operation op : ops) {
            c.retrier().call("record participants", id, null, () -> {
                c.sweep().register(op.document());
                return null;
            });
        }
    }

    /** The insert of round 1: an insert-if-absent, so a late copy can never change an existing document. */
    private Insert insert(OwnedTransaction tx, Document doc, String token) {
        Document filter = absent(tx.id);
        Document update = new Document("$setOnInsert", doc)
                .append("$currentDate", new Document(Fields.LAST_MODIFIED, true).append(INSERTED_AT, true));
        return c.retrier().call("insert", tx.id, null, () -> {
            Insert result;
            if (c.transactionWrites().write(new UpdateOneModel<>(filter, update, new UpdateOptions().upsert(true)))) {
                result = Insert.OURS;
            } else {
                Document stored = c.store().insertOrFind(tx.id, filter, update);
                result = token.equals(stored.get(Fields.TOKEN)) ? Insert.OURS
                        : !tx.nonce.equals(stored.get(NONCE)) ? Insert.OTHER
                        : Boolean.TRUE.equals(stored.get(Resolver.TOMBSTONE)) ? Insert.ABANDONED : Insert.TAKEN_OVER;
            }
            c.crashPoints().after(null, Step.INSERT, -1, tx.id);
            return result;
        });
    }

    /** True if every prepare of {@code tx} is in effect: an increment's entry, an exclusive operation's lock, with its nonce. */
    private boolean allPrepared(OwnedTransaction tx) {
        for (Operation op : tx.ops) {
            var ref = op.document();
            Document filter = op instanceof Operation.Increment ? Entries.entryFilter(ref.id(), tx.id, tx.nonce)
                    : Exclusive.locked(ref.id(), tx.id, tx.nonce);
            Document found = c.retrier().call("read prepares", tx.id, tx.state, () -> c.targets().collection(ref).find(filter)
                    .projection(Projections.include(Fields.ID)).first());
            if (found == null) {
                return false;
            }
        }
        return true;
    }

    /**
     * Drives a two-round transaction just taken over ({@code taken}, under its new epoch): pending
     * rolls forward, unless inserted after its deadline or {@code cancelReason} is given (then it
     * cancels); applied releases; canceling undoes.
     */
    public Optional<TransactionOutcome> driveTakenOver(Document taken, List<Operation> ops, String cancelReason) {
        Object id = taken.get(Fields.ID);
        OwnedTransaction tx = new OwnedTransaction(id, TransactionStore.epochOf(taken), ops,
                TransactionStore.stateOf(taken), taken.getString(Fields.REASON));
        tx.nonce = taken.getString(NONCE);
        tx.code = ReasonCode.parse(taken.get(Fields.CODE)).orElse(null);
        tx.failed = FailedOperations.of(taken);
        c.writes().stamped(tx, TransactionStore.stamped(taken));
        // Its priority from the takeover on: never older than the one its prepares in effect carry
        // (docs/CONFLICTS.md: a transaction never waits for one it must yield to).
        tx.priority = new Priority(TransactionStore.stamped(taken), tx.nonce);
        try {
            if (tx.state == PENDING) {
                Date insertedAt = taken.getDate(INSERTED_AT);
                Date until = taken.getDate(UNTIL);
                boolean late = LateCommit.insertedLate(taken);
                // A document round 1 inserted (not a queued one a worker claimed) may be a late copy of
                // that insert, landing after its transaction ended and was pruned. Its owner's prepares
                // are then gone (released or undone), and no copy of one can still land (the owner went
                // on only once each had answered or its deadline had passed): recovery rolls such a
                // transaction forward only if every prepare is in effect, and cancels it otherwise.
                boolean unprepared = !late && cancelReason == null && insertedAt != null && !allPrepared(tx);
                if (cancelReason != null || late || unprepared) {
                    // Nothing is in effect before the commit point (credits wait for the release): cancel always may.
                    tx.reason = cancelReason != null ? cancelReason
                            : late ? "its document was inserted at " + insertedAt.toInstant() + ", after its deadline " + until.toInstant()
                            : "its owner stopped before all its prepares were in effect";
                    tx.code = cancelReason != null ? ReasonCode.CANCELED_BY_OPERATOR : ReasonCode.TIMED_OUT;
                    c.writes().move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
                } else {
                    RoundOne.Sent[] sent = roundOne.send(tx, tx.deadline, null, new ArrayList<>());
                    decision.decide(tx, sent, null); // not late: checked at the takeover
                }
            }
            TransactionOutcome outcome = finish.drive(tx, false);
            c.settings().metrics().recovered(outcome.state());
            return Optional.of(outcome);
        } catch (LeaseLostException e) {
            log.info("lost transaction {} to another process during recovery: {}", id, e.getMessage());
            return Optional.empty();
        }
    }
}
