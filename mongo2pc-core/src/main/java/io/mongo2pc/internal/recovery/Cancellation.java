package io.mongo2pc.internal.recovery;

import io.mongo2pc.CancelResult;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;

/**
 * An operator's cancel of a transaction that has not reached its commit point: a queued one at
 * once, a pending one only once its owner's lease has expired (a live owner is never overtaken). A
 * commit written after its deadline ({@link LateCommit}) is canceled already: it is repaired and
 * its entries undone. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class Cancellation {
    private static final int ATTEMPTS = 10;

    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final TakeOver takeOver;
    private final Duration lease;
    private final TransactionMetrics metrics;

    public Cancellation(TransactionStore store, ServerClock clock, Retrier retrier, TakeOver takeOver, Duration lease,
                 TransactionMetrics metrics) {
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.takeOver = takeOver;
        this.lease = lease;
        this.metrics = metrics;
    }

    public CancelResult cancel(Object id, String reason) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Document doc = retrier.call("read", id, null, () -> store.find(id));
            if (doc == null) {
                return new CancelResult(CancelResult.Kind.NOT_FOUND, id, null, "no transaction with id " + id, null, null);
            }
            TransactionState state = LateCommit.stateOf(doc);
            if (LateCommit.late(doc)) {
                // Committed after its deadline: canceled already, whatever it stores. Repaired and undone here.
                takeOver.takeOver(doc, null, reason);
                return new CancelResult(CancelResult.Kind.ALREADY_CANCELED, id, state, LateCommit.REASON, ReasonCode.TIMED_OUT, null);
            }
            switch (state) {
                case INITIAL -> {
                    if (retrier.call("cancel", id, state, () -> store.cancelQueued(id, reason, ReasonCode.CANCELED_BY_OPERATOR))) {
                        metrics.canceled(reason);
                        return new CancelResult(CancelResult.Kind.CANCELED, id, TransactionState.CANCELED, reason,
                                ReasonCode.CANCELED_BY_OPERATOR, null);
                    }
                }
                case CANCELED -> {
                    return new CancelResult(CancelResult.Kind.ALREADY_CANCELED, id, state, doc.getString(Fields.REASON),
                            ReasonCode.parse(doc.get(Fields.CODE)).orElse(null), null);
                }
                case APPLIED, DONE -> {
                    return new CancelResult(CancelResult.Kind.ROLLED_FORWARD, id, state, "transaction " + id + " is "
                            + state.stored() + ": it is past its commit point and can only be rolled forward", null, null);
                }
                case PENDING, CANCELING -> {
                    CancelResult result = cancelOpen(doc, id, state, reason);
                    if (result != null) {
                        return result;
                    }
                }
                default -> throw new IllegalStateException("unexpected state " + state);
            }
        }
        throw new TransactionException("transaction " + id + " kept changing while being canceled", id, null);
    }

    /** Cancels a pending (or finishes a canceling) transaction whose owner's lease ran out; null if another process won it. */
    private CancelResult cancelOpen(Document doc, Object id, TransactionState state, String reason) {
        Instant now = retrier.call("read clock", id, state, clock::now);
        // The owner's own lease decides; a tutorial document has none, so ours stands in for it.
        Instant staleBefore = Recovery.staleBefore(doc, now, Duration.ZERO, lease);
        Date modified = doc.getDate(Fields.LAST_MODIFIED);
        if (modified != null && modified.toInstant().isAfter(staleBefore)) {
            Object owner = doc.get(Fields.OWNER);
            Instant leaseEnds = modified.toInstant().plus(Duration.between(staleBefore, now));
            return new CancelResult(CancelResult.Kind.OWNER_ALIVE, id, state, "transaction " + id + " is " + state.stored()
                    + " and " + (owner == null ? "has no owner recorded (a tutorial application's?); its lease runs until "
                    : "owned by " + owner + " whose lease runs until ") + leaseEnds + " (server time now " + now
                    + "); cancel it after that, or let it finish", null, leaseEnds);
        }
        Optional<TransactionOutcome> outcome = takeOver.takeOver(doc, staleBefore, reason);
        if (outcome.isEmpty()) {
            return null;
        }
        TransactionOutcome o = outcome.get();
        if (o.isCanceled()) {
            return new CancelResult(CancelResult.Kind.CANCELED, id, o.state(), o.reason(), o.reasonCode(), null);
        }
        return new CancelResult(CancelResult.Kind.ROLLED_FORWARD, id, o.state(), "transaction " + id
                + " had every operation applied, so it was rolled forward to " + o.state().stored() + " instead of canceled",
                null, null);
    }
}
