package io.mongo2pc.internal.tutorial;

import io.mongo2pc.LeaseLostException;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.CrashPoints;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The writes an owner makes under its lease: participant writes (retried through transient errors,
 * settled when in doubt, waited out while a document is busy, repeated after a renewal when the
 * server refused them past the owner's deadline) and its transitions (compare-and-set on state and
 * epoch). Every write is preceded and followed by its crash point. Thread-safe: each caller passes
 * the transaction it holds.
 * Public for the tworound and recovery packages and Engine, as are the members they use.
 */
public final class OwnerWrites {
    private final TransactionManagerSettings settings;
    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final WritesInDoubt writesInDoubt;
    /** Group commit of inserts and state changes of the transactions collection. */
    private final WriteCombiner transactionWrites;
    private final CrashPoints crashPoints;

    public OwnerWrites(TransactionManagerSettings settings, TransactionStore store, ServerClock clock, Retrier retrier,
                WritesInDoubt writesInDoubt, WriteCombiner transactionWrites, CrashPoints crashPoints) {
        this.settings = settings;
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.writesInDoubt = writesInDoubt;
        this.transactionWrites = transactionWrites;
        this.crashPoints = crashPoints;
    }

    /**
     * Records a new {@code lastModified} stamp of an owned transaction. The write deadline is the
     * stamp plus the lease, less the clock skew allowed between servers: nobody takes the
     * transaction over before the stamp plus the lease, so every write that passes the deadline
     * check ran before any takeover.
     */
    public void stamped(OwnedTransaction tx, Instant stamp) {
        tx.deadline = stamp.plus(settings.lease()).minus(settings.maxClockSkew());
        tx.stampedNanos = System.nanoTime();
    }

    // ---- participant writes ----------------------------------------------------------------

    /**
     * One participant write under the owner's deadline. A write the server refused because the
     * deadline passed is repeated after renewing the lease (or this owner stops: someone took
     * over); a document full of markers is waited for, with backoff, up to the conflict timeout.
     */
    Participants.Result participantWrite(OwnedTransaction tx, Step step, int participant,
                                         Function<Instant, Participants.Result> write) {
        long busySince = 0;
        long backoffMs = 5;
        int expired = 0;
        while (true) {
            renewIfDue(tx);
            Instant deadline = tx.deadline;
            crashPoints.before(step, participant, tx.id);
            Participants.Result result = retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, tx.state,
                    () -> crashPoints.after(writesInDoubt.settled(step, tx.ops.get(participant), participant, tx.id, deadline,
                            () -> write.apply(deadline)), step, participant, tx.id));
            switch (result.kind()) {
                case EXPIRED -> {
                    if (++expired > 3) {
                        // Refused even right after renewals: the lease is too short for this write's latency.
                        settings.metrics().leaseLost();
                        throw new LeaseLostException("transaction " + tx.id + ": " + step.name().toLowerCase(Locale.ROOT)
                                + " missed the owner's deadline " + expired + " times in a row; the lease "
                                + settings.lease().toMillis() + "ms is too short for the database's latency", tx.id, tx.state);
                    }
                    renew(tx);
                }
                case BUSY -> {
                    long now = settings.clock().nanoTime();
                    busySince = busySince == 0 ? now : busySince;
                    if (now - busySince > settings.conflictTimeout().toNanos()) {
                        settings.metrics().conflict();
                        return result;
                    }
                    waitBusy(backoffMs, tx.id, tx.state);
                    backoffMs = Math.min(200, backoffMs * 2);
                }
                default -> {
                    return result;
                }
            }
        }
    }

    /**
     * The writes of {@code step} for every operation in one request, with the crash points of each
     * around it. True if all matched; false sends the caller to the one-by-one path, which settles
     * whatever this left (every write is idempotent).
     */
    boolean batch(OwnedTransaction tx, Step step, Function<Instant, Boolean> write) {
        renewIfDue(tx);
        Instant deadline = tx.deadline;
        crashPoints.each(step, CrashPoint.Phase.BEFORE, tx.ops.size(), tx.id);
        return retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, tx.state, () -> {
            boolean all = write.apply(deadline);
            crashPoints.each(step, CrashPoint.Phase.AFTER, tx.ops.size(), tx.id);
            return all;
        });
    }

    /** Waits about {@code millis} (with jitter, on the manager's clock) before a busy document is tried again. */
    public void waitBusy(long millis, Object txId, TransactionState state) {
        try {
            settings.clock().sleep(Duration.ofMillis(millis + ThreadLocalRandom.current().nextLong(millis + 1)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while waiting for a busy document",
                    txId, state, e);
        }
    }

    // ---- transitions and the lease ---------------------------------------------------------

    /**
     * Moves an owned transaction by {@code t}: the compare-and-set on state and epoch
     * ({@link TransactionStore#transition}) between the crash points of {@code t}'s write.
     */
    public void move(OwnedTransaction tx, Transition t, Document extra) {
        moveIf(tx, t, extra, null);
    }

    /**
     * {@link #move} only where {@code condition} (more of the transaction document's fields) also
     * holds; false, with nothing moved, if the transaction is still where it was under this owner
     * but {@code condition} does not hold. With no condition, always true.
     */
    public boolean moveIf(OwnedTransaction tx, Transition t, Document extra, Document condition) {
        TransactionState from = tx.state;
        TransactionState to = t.to(from);
        crashPoints.reach(t, CrashPoint.Phase.BEFORE, tx.id);
        Instant stamp = retrier.call(t.label(), tx.id, from, () -> crashPoints.reached(moveOnce(tx, t, extra, condition), t, tx.id));
        if (stamp == null) {
            Document current = retrier.call("read", tx.id, from, () -> store.find(tx.id));
            boolean ackLost = current != null && TransactionStore.stateOf(current) == to
                    && TransactionStore.epochOf(current) == tx.epoch;
            if (ackLost) {
                stamp = TransactionStore.stamped(current);
            } else if (condition != null && current != null && TransactionStore.stateOf(current) == from
                    && TransactionStore.epochOf(current) == tx.epoch) {
                return false;
            } else if (ended(tx, t, current)) {
                tx.state = to.isTerminal() ? to : TransactionState.DONE;
                return true;
            } else if (to == TransactionState.APPLIED && current == null) {
                throw new OutcomeUnknownException("transaction " + tx.id + ": its document was gone (pruned) when its owner"
                        + " read back its commit; it may have committed and been finished by others", tx.id, from, null);
            } else {
                settings.metrics().leaseLost();
                throw new LeaseLostException("transaction " + tx.id + ": expected state " + from.stored() + " under epoch "
                        + tx.epoch + " to move to " + to.stored() + ", found "
                        + (current == null ? "no transaction" : "state " + current.get(Fields.STATE) + " epoch "
                        + current.get(Fields.EPOCH) + " owner " + current.get(Fields.OWNER)), tx.id, from);
            }
        }
        tx.state = to;
        stamped(tx, stamp);
        return true;
    }

    /**
     * True if the transaction already reached where {@code t} would take it, although {@code t}
     * matched nothing here: {@code t} ends it ({@code done} or {@code canceled}, the only end its
     * from-state leads to: an owner past its commit point has a commit in time) and the document is
     * there in that state under any epoch (this move's lost answer, a reader's roll forward, another
     * owner), or gone (only a finished document is pruned); or {@code t} is the commit and the
     * document is {@code done} under this owner's epoch (committed here, then rolled forward by a
     * reader, which keeps the epoch). Then nothing is left for this owner to do, and the transaction
     * ended as it would have.
     */
    private static boolean ended(OwnedTransaction tx, Transition t, Document current) {
        TransactionState to = t.to(tx.state);
        if (to.isTerminal()) {
            return current == null || TransactionStore.stateOf(current) == to;
        }
        return to == TransactionState.APPLIED && current != null && TransactionStore.stateOf(current) == TransactionState.DONE
                && TransactionStore.epochOf(current) == tx.epoch;
    }

    /**
     * The compare-and-set of {@link #move}, sent with other threads' writes when it can be: if
     * it is known to have matched, the stamp is a lower bound of the server's clock taken before
     * sending (so the write deadline derived from it is never later than the real one); else the
     * single-request compare-and-set returns the stamp, or null if it does not match (perhaps
     * because the combined one did: the caller reads the document to tell).
     */
    private Instant moveOnce(OwnedTransaction tx, Transition t, Document extra, Document condition) {
        Instant sentAfter = clock.lowerBound();
        Document match = TransactionStore.owned(tx.id, tx.epoch);
        if (condition != null) {
            match.putAll(condition);
        }
        if (transactionWrites.write(TransactionStore.transitionWrite(t, tx.state, match, extra))) {
            return sentAfter;
        }
        return store.move(match, t, tx.state, extra);
    }

    /** Long transactions stamp lastModified between state changes so their lease does not run out. */
    public void renewIfDue(OwnedTransaction tx) {
        if (due(tx)) {
            renew(tx);
        }
    }

    private boolean due(OwnedTransaction tx) {
        return System.nanoTime() - tx.stampedNanos >= settings.lease().toNanos() / 3;
    }

    /**
     * {@link #renew} ({@link #renewIfDue} if {@code ifDue}), except for a pending transaction whose
     * document was inserted at or after {@code tx.insertedBefore} (round 1's deadline): that one
     * can never commit nor be renewed, only be canceled, and this returns false with nothing
     * renewed. Throws {@link LeaseLostException} if another process took the transaction over.
     */
    public boolean renewUnlessInsertedLate(OwnedTransaction tx, boolean ifDue) {
        if (ifDue && !due(tx)) {
            return true;
        }
        if (tx.state == TransactionState.PENDING && tx.insertedBefore != null) {
            Document stored = retrier.call("read", tx.id, tx.state, () -> store.find(tx.id));
            if (stored != null && TransactionStore.epochOf(stored) == tx.epoch && stored.get(TwoRoundFields.INSERTED_AT) instanceof Date at
                    && !at.before(Date.from(tx.insertedBefore))) {
                return false;
            }
        }
        renew(tx);
        return true;
    }

    public void renew(OwnedTransaction tx) {
        Instant insertedBefore = tx.state == TransactionState.PENDING ? tx.insertedBefore : null;
        Instant stamp = retrier.call("renew", tx.id, tx.state, () -> store.renew(tx.id, tx.epoch, tx.state, insertedBefore));
        if (stamp == null) {
            settings.metrics().leaseLost();
            throw new LeaseLostException("transaction " + tx.id + " was taken over while its owner " + settings.owner()
                    + " held it under epoch " + tx.epoch + " in state " + tx.state.stored()
                    + (insertedBefore == null ? "" : ", or its document was inserted after its deadline " + insertedBefore),
                    tx.id, tx.state);
        }
        stamped(tx, stamp);
    }
}
