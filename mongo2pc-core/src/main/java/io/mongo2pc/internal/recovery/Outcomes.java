package io.mongo2pc.internal.recovery;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.internal.admin.Pruning;
import io.mongo2pc.internal.admin.StoredTransactions;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.tworound.Resolver;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.spi.Clock;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * What became of a transaction, read from its stored document: a typed view, its outcome once
 * decided (waiting for it, and finishing it if its owner is gone), and the answer to a caller that
 * runs the same transaction id again. Thread-safe.
 * Public for the interactive package and Engine, as are the members they use.
 */
public final class Outcomes {
    private static final long FIRST_PAUSE_MS = 10;
    private static final long MAX_PAUSE_MS = 200;

    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final Function<Document, List<Operation>> operationsOf;
    private final TakeOver takeOver;
    private final Duration lease;
    /** The local clock of the wait for an outcome (the lease is judged by the server's, {@code clock}). */
    private final Clock waits;

    public Outcomes(TransactionStore store, ServerClock clock, Retrier retrier, Function<Document, List<Operation>> operationsOf,
             TakeOver takeOver, Duration lease, Clock waits) {
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.operationsOf = operationsOf;
        this.takeOver = takeOver;
        this.lease = lease;
        this.waits = waits;
    }

    public Optional<TransactionView> view(Object id) {
        return Optional.ofNullable(retrier.call("read", id, null, () -> store.find(id))).map(this::view);
    }

    private TransactionView view(Document doc) {
        return StoredTransactions.view(doc, operationsOf);
    }

    /**
     * The outcome of {@code id} once it is decided: {@code done}, {@code canceled}, or
     * {@code applied} (committed) while a live owner finishes it. A transaction whose owner's lease
     * has run out is taken over and finished here. Empty if there is no such transaction. Throws
     * {@link OutcomeUnknownException} if it is still open after {@code timeout} (a live owner still
     * working, or a queued one no worker has claimed).
     */
    public Optional<TransactionOutcome> await(Object id, Duration timeout) {
        long deadline = waits.nanoTime() + timeout.toNanos();
        long pause = FIRST_PAUSE_MS;
        TransactionView seen = null;
        while (true) {
            Document doc = retrier.call("read", id, null, () -> store.find(id));
            if (doc == null) {
                return seen == null ? Optional.empty() : removedWhileAwaited(id, seen);
            }
            TransactionView view = view(doc);
            seen = view;
            if (view.state() == null) {
                throw new InvalidTransactionException("transaction " + id + " has a state mongo2pc does not know: "
                        + doc.get(Fields.STATE), id);
            }
            Instant now = clock.lowerBound();
            Instant staleBefore = Recovery.staleBefore(doc, now, Duration.ZERO, lease);
            boolean stale = view.lastModified() == null || !view.lastModified().isAfter(staleBefore);
            if (view.isTerminal() || view.state() == TransactionState.APPLIED && !stale) {
                return Optional.of(view.outcome());
            }
            if (stale && view.state() != TransactionState.INITIAL) {
                Optional<TransactionOutcome> finished = takeOver.takeOver(doc, staleBefore, null);
                if (finished.isPresent()) {
                    return finished;
                }
                continue; // another process took it over first: read what it did
            }
            long left = deadline - waits.nanoTime();
            if (left <= 0) {
                throw new OutcomeUnknownException("transaction " + id + " is still " + view.state().stored() + " after "
                        + timeout.toMillis() + "ms" + (view.state() == TransactionState.INITIAL ? " (queued for a worker)"
                        : " (owned by " + view.owner() + ", lease until " + view.leaseEnds() + ")") + "; await it again later",
                        id, view.state(), null);
            }
            sleep(Math.min(pause, left / 1_000_000 + 1), id, view.state());
            pause = Math.min(MAX_PAUSE_MS, pause * 2);
        }
    }

    /**
     * The outcome of {@code id}, whose document this call read ({@code seen}) and then found gone:
     * only a finished document is removed (pruned), so one seen committed ended {@code done}; one
     * seen before its decision ended one way or the other, and its document no longer says which.
     */
    private static Optional<TransactionOutcome> removedWhileAwaited(Object id, TransactionView seen) {
        if (seen.isCommitted()) {
            return Optional.of(new TransactionOutcome(id, TransactionState.DONE, null));
        }
        throw new OutcomeUnknownException("transaction " + id + " ended and its document was removed (pruned) while this call"
                + " waited for it (it was " + seen.state().stored() + "); how it ended is no longer stored", id, seen.state(), null);
    }

    /**
     * A caller ran {@code id} again: refused if it is stored with other operations, else the outcome
     * of the first run (waited for, up to {@code timeout}).
     */
    public TransactionOutcome ofExisting(Object id, List<Operation> ops, Duration timeout) {
        requireSame(id, ops);
        return await(id, timeout).orElseThrow(() -> new InvalidTransactionException("transaction " + id
                + " was removed (pruned) while this call waited for it; it ran before, so it is not run again", id));
    }

    /** Refuses {@code ops} if the stored transaction {@code id} has other operations. */
    public void requireSame(Object id, List<Operation> ops) {
        Document stored = retrier.call("read", id, null, () -> store.find(id));
        if (stored == null || Boolean.TRUE.equals(stored.get(Resolver.TOMBSTONE)) || Pruning.isStub(stored)) {
            // pruned since (its stub, or nothing left): nothing to compare, and nothing is run again; or a
            // tombstone: the call that used the id was abandoned in round 1, and its outcome (canceled) is the id's
            return;
        }
        List<Operation> storedOps;
        try {
            storedOps = operationsOf.apply(stored);
        } catch (RuntimeException e) {
            storedOps = null;
        }
        if (storedOps == null || !OperationCodec.encode(storedOps).equals(OperationCodec.encode(ops))) {
            throw new InvalidTransactionException("transaction id " + id + " is already used by another transaction ("
                    + stored.get(Fields.STATE) + ", with other operations); an id names one transaction: use a new one",
                    id);
        }
    }

    private void sleep(long millis, Object id, TransactionState state) {
        try {
            waits.sleep(Duration.ofMillis(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("interrupted while waiting for the outcome of transaction " + id, id, state, e);
        }
    }
}
