package io.mongo2pc.internal.recovery;

import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.format.FailedOperations;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.format.UnreadableTransactionException;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.state.Tokens;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.tutorial.Coordinator;
import io.mongo2pc.internal.tutorial.OwnerWrites;
import io.mongo2pc.internal.tutorial.WritesInDoubt;
import io.mongo2pc.internal.tworound.TwoRound;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.mongo2pc.TransactionState.CANCELED;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * The {@link TakeOver} that recovery, cancels and awaited outcomes use: one compare-and-set that
 * makes this process the owner under the next epoch, then the drive loop. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class TakeOverAndDrive implements TakeOver {
    private static final Logger log = LoggerFactory.getLogger(TakeOverAndDrive.class);

    private final TransactionManagerSettings settings;
    private final TransactionStore store;
    private final Retrier retrier;
    private final StoredOperations operations;
    private final WritesInDoubt writesInDoubt;
    private final Participants participants;
    private final OwnerWrites writes;
    private final Coordinator coordinator;
    private final CrashPoints crashPoints;
    private final Tokens tokens;
    private final TwoRound twoRound;

    public TakeOverAndDrive(TransactionManagerSettings settings, TransactionStore store, Retrier retrier, StoredOperations operations,
                     WritesInDoubt writesInDoubt, Participants participants, OwnerWrites writes, Coordinator coordinator,
                     CrashPoints crashPoints, Tokens tokens, TwoRound twoRound) {
        this.settings = settings;
        this.store = store;
        this.retrier = retrier;
        this.operations = operations;
        this.writesInDoubt = writesInDoubt;
        this.participants = participants;
        this.writes = writes;
        this.coordinator = coordinator;
        this.crashPoints = crashPoints;
        this.tokens = tokens;
        this.twoRound = twoRound;
    }

    @Override
    public Optional<TransactionOutcome> takeOver(Document seen, Instant staleBefore, String cancelReason) {
        Object id = seen.get(Fields.ID);
        List<Operation> ops;
        try {
            ops = operations.of(seen);
            // Stored by anyone (a tutorial app, a hand edit): check as strictly as a new one, but
            // not against this instance's size limit, which may be lower than its creator's.
            operations.validate(ops, Integer.MAX_VALUE, id);
        } catch (RuntimeException e) {
            throw new UnreadableTransactionException("transaction " + id + " cannot be taken over: " + e.getMessage(), id, e);
        }
        if (LateCommit.late(seen)) {
            return Optional.of(cancelLate(seen, ops));
        }
        Document taken = takeOverOnce(seen, staleBefore, id);
        if (taken == null) {
            settings.metrics().conflict();
            return Optional.empty();
        }
        settings.metrics().takeover();
        if (TwoRoundFields.follows(taken)) {
            return twoRound.driveTakenOver(taken, ops, cancelReason);
        }
        writesInDoubt.noteInserts(id, ops);
        OwnedTransaction tx = new OwnedTransaction(id, TransactionStore.epochOf(taken), ops, TransactionStore.stateOf(taken),
                taken.getString(Fields.REASON));
        tx.code = ReasonCode.parse(taken.get(Fields.CODE)).orElse(null);
        tx.failed = FailedOperations.of(taken);
        writes.stamped(tx, TransactionStore.stamped(taken));
        try {
            if (cancelReason != null && tx.state == PENDING) {
                // Every operation in effect: nothing can refuse it any more, and undoing a credit that
                // others may have spent could overdraw. It commits instead (the outcome says so).
                if (!participants.allApplied(tx.ops, tx.id)) {
                    tx.reason = cancelReason;
                    tx.code = ReasonCode.CANCELED_BY_OPERATOR;
                    writes.move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
                }
            }
            TransactionOutcome outcome = coordinator.drive(tx, false);
            settings.metrics().recovered(outcome.state());
            return Optional.of(outcome);
        } catch (LeaseLostException e) {
            log.info("lost transaction {} to another process during recovery: {}", id, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * A commit written after its deadline ({@link LateCommit}): canceled for everyone already, so it
     * is never taken over, released or moved to done. Its document is repaired to canceled (a
     * repair that matches nothing was made by another process), then every entry is undone by the
     * nonce, without a deadline: its owner wrote the commit only once every prepare was answered,
     * so none can still land. The undo matches only entries still there (a resolver may have undone
     * some already), and a crash in between leaves them to the sweep.
     */
    private TransactionOutcome cancelLate(Document seen, List<Operation> ops) {
        Object id = seen.get(Fields.ID);
        retrier.call("repair", id, CANCELED, () -> store.repair(seen));
        OwnedTransaction tx = new OwnedTransaction(id, TransactionStore.epochOf(seen), ops, CANCELED, LateCommit.REASON);
        tx.nonce = seen.getString(TwoRoundFields.NONCE);
        tx.code = ReasonCode.TIMED_OUT;
        twoRound.finish().undoAll(tx, false);
        settings.metrics().recovered(CANCELED);
        return new TransactionOutcome(id, CANCELED, tx.reason, tx.code);
    }

    /** The takeover's compare-and-set; the document after it, or null if another process won. */
    private Document takeOverOnce(Document seen, Instant staleBefore, Object id) {
        Transition t = Transition.TAKEOVER;
        crashPoints.reach(t, CrashPoint.Phase.BEFORE, id);
        // A token of this attempt: two threads of one manager share its owner name, so only the
        // token tells our own takeover (acknowledgement lost, then retried) from a sibling's.
        String token = tokens.next();
        Document taken = retrier.call(t.label(), id, TransactionStore.stateOf(seen),
                () -> crashPoints.reached(store.takeOver(seen, staleBefore, settings.application(), settings.owner(),
                        settings.lease().toMillis(), token), t, id));
        if (taken == null) {
            Document current = retrier.call("read", id, null, () -> store.find(id));
            if (current != null && token.equals(current.get(Fields.TOKEN))) {
                taken = current;
            }
        }
        return taken;
    }
}
