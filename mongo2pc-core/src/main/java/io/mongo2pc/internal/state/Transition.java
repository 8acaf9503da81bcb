package io.mongo2pc.internal.state;

import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.CANCELED;
import static io.mongo2pc.TransactionState.CANCELING;
import static io.mongo2pc.TransactionState.DONE;
import static io.mongo2pc.TransactionState.INITIAL;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * Every change of a stored transaction's state or owner, named: the states it may start from,
 * the state it ends in, and the crash point step around its write. Each is performed by one
 * compare-and-set, {@link TransactionStore#transition}; nothing else writes a state. Each
 * state-to-state move is one of {@link TransactionState}'s allowed moves (checked when the class
 * loads). Immutable.
 * Public for the tutorial, tworound, reads and recovery packages and Engine, as are the members they use.
 */
public enum Transition {
    /** Claim: a worker takes a queued transaction as its first owner (epoch 1). */
    INITIAL_TO_PENDING(Step.CLAIM, PENDING, INITIAL),
    /** Commit: the commit point, every operation applied. */
    PENDING_TO_APPLIED(Step.COMMIT, APPLIED, PENDING),
    /** Begin cancel: an operation was refused (or an operator canceled); what was applied is undone next. */
    PENDING_TO_CANCELING(Step.BEGIN_CANCEL, CANCELING, PENDING),
    /** Finish: every marker released after the commit point. */
    APPLIED_TO_DONE(Step.FINISH, DONE, APPLIED),
    /** Finish cancel: every applied operation undone. */
    CANCELING_TO_CANCELED(Step.FINISH_CANCEL, CANCELED, CANCELING),
    /**
     * Cancel queued: an operator cancels a transaction nobody has claimed (nothing to undo). It
     * has no crash point: nothing of the protocol runs between this single write and the next.
     */
    INITIAL_TO_CANCELED(null, CANCELED, INITIAL),
    /** Takeover of a stale transaction by a new owner: the state stays, the epoch goes up by one. */
    TAKEOVER(Step.TAKEOVER, null, PENDING, APPLIED, CANCELING);

    private final Step step;
    private final TransactionState to;
    private final Set<TransactionState> from;

    Transition(Step step, TransactionState to, TransactionState first, TransactionState... more) {
        this.step = step;
        this.to = to;
        this.from = EnumSet.of(first, more);
    }

    static {
        for (Transition t : values()) {
            for (TransactionState s : t.from) {
                if (t.to != null && !s.canMoveTo(t.to)) {
                    throw new ExceptionInInitializerError(t + ": " + s + " -> " + t.to + " is not a move of the protocol");
                }
            }
        }
    }

    /** The state {@code from} ends in: the to-state, or {@code from} itself for a takeover. */
    public TransactionState to(TransactionState from) {
        if (!this.from.contains(from)) {
            throw new IllegalStateException(this + " cannot start from " + from.stored() + " (only from " + this.from + ")");
        }
        return to == null ? from : to;
    }

    /** The states this transition starts from. */
    Set<TransactionState> from() {
        return from;
    }

    /** The crash point of this transition's write in {@code phase}, or null if it has none. */
    CrashPoint crashPoint(CrashPoint.Phase phase) {
        if (step == null) {
            return null;
        }
        return phase == CrashPoint.Phase.BEFORE ? CrashPoint.before(step, -1) : CrashPoint.after(step, -1);
    }

    /** The crash point step of its write, or null if it has none. */
    Step step() {
        return step;
    }

    /** The name of its write in retries' messages ("commit", "claim", ...). */
    public String label() {
        return step == null ? "cancel" : step.name().toLowerCase(Locale.ROOT);
    }
}
