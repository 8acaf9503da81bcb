package io.mongo2pc.internal.tutorial;

import com.mongodb.MongoException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.spi.CrashPoint.Step;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.mongo2pc.TransactionState.APPLIED;

/**
 * The drive loop: moves a transaction this process owns from its stored state to a terminal one,
 * each step a set of participant writes followed by one transition. Thread-safe: each caller
 * drives its own transaction.
 * Public for the recovery package and Engine, as are the members they use.
 */
public final class Coordinator {
    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);

    private final Participants participants;
    private final OwnerWrites writes;
    private final Finishing finishing;
    private final TransactionMetrics metrics;

    public Coordinator(Participants participants, OwnerWrites writes, Finishing finishing, TransactionMetrics metrics) {
        this.participants = participants;
        this.writes = writes;
        this.finishing = finishing;
        this.metrics = metrics;
    }

    /**
     * Drives {@code tx} to its end; with {@code ownCall} and a background finisher, only to its
     * commit point: it is then handed to the finisher and the outcome says {@code applied}.
     */
    public TransactionOutcome drive(OwnedTransaction tx, boolean ownCall) {
        boolean inBackground = ownCall && finishing.inBackground();
        while (!tx.state.isTerminal() && !(inBackground && tx.state == APPLIED)) {
            switch (tx.state) {
                case PENDING -> {
                    if (applyAll(tx)) {
                        writes.move(tx, Transition.PENDING_TO_APPLIED, null);
                    } else {
                        writes.move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
                    }
                }
                case APPLIED -> {
                    if (ownCall) {
                        return finishCommitted(tx);
                    }
                    finishing.finish(tx);
                }
                case CANCELING -> {
                    undoAll(tx);
                    writes.move(tx, Transition.CANCELING_TO_CANCELED, null);
                }
                default -> throw new IllegalStateException("transaction " + tx.id + " cannot be driven from " + tx.state);
            }
        }
        if (tx.state == APPLIED) {
            return handOver(tx);
        }
        tx.counted(metrics);
        return tx.outcome();
    }

    /**
     * Finishes a committed transaction of the caller's own call inline. Past its commit point it is
     * committed, whatever finishing meets (another process that took it over, its document finished
     * and pruned, an error): the caller is told so, never an exception it might retry (and so pay
     * twice); recovery finishes what is left once the lease runs out.
     */
    private TransactionOutcome finishCommitted(OwnedTransaction tx) {
        try {
            finishing.finish(tx);
        } catch (MongoException | TransactionException e) {
            log.warn("transaction {} committed; finishing it failed ({}), it is rolled forward by others", tx.id, e.toString());
            return new TransactionOutcome(tx.id, APPLIED, null);
        }
        tx.counted(metrics);
        return tx.outcome();
    }

    /** Applies every operation; true if all are in effect, else false with why one cannot be noted in {@code tx}. */
    private boolean applyAll(OwnedTransaction tx) {
        // One by one, in order, never batched: a later write must not be in effect (a credit that
        // others could spend) before an earlier one's guard (the debit's) has held.
        for (int i = 0; i < tx.ops.size(); i++) {
            Operation op = tx.ops.get(i);
            Participants.Result result = writes.participantWrite(tx, Step.APPLY, i,
                    deadline -> participants.apply(op, tx.id, deadline));
            if (result.kind() == Participants.Kind.REFUSED || result.kind() == Participants.Kind.BUSY) {
                tx.refusedAt(i, result);
                return false;
            }
        }
        return true;
    }

    /** Undoes only what is in effect: the marker says which participants were applied. */
    private void undoAll(OwnedTransaction tx) {
        for (int i = tx.ops.size() - 1; i >= 0; i--) {
            Operation op = tx.ops.get(i);
            writes.participantWrite(tx, Step.UNDO, i, deadline -> participants.undo(op, tx.id, deadline));
        }
    }

    /** A committed transaction of the caller's own call, handed to the background finisher. */
    private TransactionOutcome handOver(OwnedTransaction tx) {
        if (finishing.offer(tx)) {
            // From here on tx is the finisher's thread's (which counts it once done): do not read it.
            return new TransactionOutcome(tx.id, APPLIED, null);
        }
        // Closed (or interrupted) while handing over: past the commit point, so finish it here.
        return finishCommitted(tx);
    }
}
