package io.mongo2pc.model;

import io.mongo2pc.model.InteractiveState.Fixed;
import io.mongo2pc.model.InteractiveState.Phase;
import io.mongo2pc.model.InteractiveState.Proc;
import io.mongo2pc.model.InteractiveState.Wire;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import static io.mongo2pc.model.InteractiveState.NAME;

/**
 * An exhaustive model of interactive transactions (docs/INTERACTIVE.md) mixed with a
 * fixed-operation transfer on the same documents. Documents A and B carry a value, a stored
 * version, perhaps an interactive lock (with the before-image its change keeps) and perhaps the
 * marker of F, a two-round transfer B -> A of 1 (hold B under {@code B >= 1}, mark A; after its
 * commit point, release A adding 1 and both releases adding 1 to the version). Interactive
 * processes run bodies ({@link InteractiveProgram}): an optimistic attempt first, a pessimistic one
 * after a conflict, at most {@link #attempts} in all.
 *
 * <p>Faults: every interleaving; one take whose answer is lost, which lands any time before its
 * attempt's deadline or never; crashes (the process stops; its locks are resolved by anyone past
 * their deadline, rolled forward if its commit counted); deadlines pass at any time (a paused
 * owner: its takes and commit then fail, and anyone may undo its locks). Reads and checks are atomic
 * (readCommitted's double read makes them so).
 *
 * <p>Invariants: no stored or committed value below zero; in finished states, the history of
 * what committed is serializable ({@link InteractiveProgram#serializable}). Liveness: a finished
 * state is reachable from every state.
 */
final class InteractiveModel implements Model<InteractiveState> {
    final Set<InteractiveBug> bugs;
    final InteractiveProgram[] programs;
    final boolean withFixed;
    final int[] initial;
    final int attempts;
    final int delays;
    final int crashes;
    private final InteractiveAttempts processes = new InteractiveAttempts(this);

    InteractiveModel(Set<InteractiveBug> bugs, InteractiveProgram[] programs, boolean withFixed, int[] initial, int attempts,
                     int delays, int crashes) {
        this.bugs = bugs.isEmpty() ? EnumSet.noneOf(InteractiveBug.class) : EnumSet.copyOf(bugs);
        this.programs = programs.clone();
        this.withFixed = withFixed;
        this.initial = initial.clone();
        this.attempts = attempts;
        this.delays = delays;
        this.crashes = crashes;
    }

    boolean has(InteractiveBug bug) {
        return bugs.contains(bug);
    }

    /**
     * The committed value and committed version of document {@code d}: an update's lock not
     * committed shows its before-image; F's marker adds what F's release will add if F is committed
     * (A's credit, 1 to the version), and gives back B's hold if not.
     */
    int[] committed(InteractiveState s, int d) {
        int value = s.value[d];
        int version = s.version[d];
        if (s.lockProc[d] >= 0 && !s.lockCommitted(d) && s.lockChanged[d]) {
            value = s.undoValue[d];
            version = s.undoVersion[d];
        }
        if (s.mark[d]) {
            if (s.fixedCommitted()) {
                value += d == 0 ? 1 : 0;
                version++;
            } else {
                value += d == 1 ? 1 : 0;
            }
        }
        return new int[] {value, version};
    }

    /**
     * An optimistic take's filter: no marker, the stored version the committed version read, and no
     * lock or the lock of a transaction that committed (its release still to come: the take replaces
     * it, the committed content being the stored one). The code names the one committed lock its read
     * saw; any committed lock here is a superset of that.
     */
    boolean takeMatches(InteractiveState s, int d, int versionRead) {
        boolean free = s.lockProc[d] < 0 || s.lockCommitted(d) || has(InteractiveBug.TAKE_OVER_HELD);
        return free && (!s.mark[d] || has(InteractiveBug.TAKE_IGNORES_MARKERS)) && s.version[d] == versionRead;
    }

    /** The take's update: the lock with the before-image as read, the new value, the version read + 1. */
    void applyTake(InteractiveState s, int d, int p, int nonce, int attempt, int newValue, int valueRead, int versionRead) {
        boolean over = s.lockProc[d] >= 0;
        s.lock(d, p, nonce, attempt);
        s.overCommitted[d] = over;
        s.lockChanged[d] = true;
        s.undoValue[d] = valueRead;
        s.undoVersion[d] = versionRead;
        s.value[d] = newValue;
        s.version[d] = versionRead + 1;
    }

    @Override
    public List<InteractiveState> initialStates() {
        InteractiveState s = new InteractiveState();
        s.value = initial.clone();
        s.fixed = withFixed ? Fixed.PENDING : Fixed.DONE;
        s.procs = new Proc[programs.length];
        for (int p = 0; p < programs.length; p++) {
            s.procs[p] = new Proc();
        }
        s.committedNonce = new int[programs.length];
        s.delaysLeft = delays;
        s.crashesLeft = crashes;
        return List.of(s);
    }

    @Override
    public List<Step<InteractiveState>> successors(InteractiveState s) {
        List<Step<InteractiveState>> out = new ArrayList<>();
        for (int p = 0; p < s.procs.length; p++) {
            processes.steps(s, p, out);
            int proc = p;
            if (s.crashesLeft > 0 && s.procs[p].phase.live()) {
                InteractiveState n = s.copy();
                n.crashesLeft--;
                n.procs[p].phase = Phase.CRASHED;
                out.add(new Step<>(() -> "P" + proc + " crashes", n));
            }
            for (int a = 1; a <= s.procs[p].attempt; a++) {
                int attempt = a;
                if (!s.procs[p].deadlinePassed[a]) {
                    InteractiveState n = s.copy();
                    n.procs[p].deadlinePassed[a] = true;
                    if (n.wire != null && n.wire.proc() == p && n.wire.attempt() == a) {
                        n.wire = null; // fenced: it can no longer take effect
                    }
                    out.add(new Step<>(() -> "time passes: P" + proc + "'s attempt " + attempt + " is past its deadline + skew", n));
                }
            }
        }
        fixedSteps(s, out);
        wireSteps(s, out);
        resolverSteps(s, out);
        List<Step<InteractiveState>> normalized = new ArrayList<>(out.size());
        for (Step<InteractiveState> step : out) {
            normalized.add(new Step<>(step.label(), normalize(step.next())));
        }
        return normalized;
    }

    /**
     * Forgets what no rule can look at any more: whether the deadline of an attempt passed once no
     * lock or write on the wire carries that attempt and it is not its process's live one (such a
     * deadline is taken as passed).
     */
    private static InteractiveState normalize(InteractiveState s) {
        for (int p = 0; p < s.procs.length; p++) {
            Proc c = s.procs[p];
            for (int a = 1; a < c.deadlinePassed.length; a++) {
                if (c.deadlinePassed[a] || a == c.attempt && c.phase.live()) {
                    continue;
                }
                boolean used = s.wire != null && s.wire.proc() == p && s.wire.attempt() == a;
                for (int d = 0; d < InteractiveState.DOCS; d++) {
                    used |= s.lockProc[d] == p && s.lockAttempt[d] == a;
                }
                if (!used && a <= c.attempt) {
                    c.deadlinePassed[a] = true;
                }
            }
        }
        return s;
    }

    /** F, the fixed-operation transfer B -> A of 1 by the two-round rules. */
    private void fixedSteps(InteractiveState s, List<Step<InteractiveState>> out) {
        switch (s.fixed) {
            case PENDING -> {
                if (!s.mark[1] && s.lockProc[1] < 0 && s.value[1] >= 1) {
                    InteractiveState n = s.copy();
                    n.mark[1] = true;
                    n.value[1]--;
                    out.add(new Step<>(() -> "F holds 1 of B (guard B >= 1)", n));
                }
                if (!s.mark[0] && s.lockProc[0] < 0) {
                    InteractiveState n = s.copy();
                    n.mark[0] = true;
                    out.add(new Step<>(() -> "F marks A", n));
                }
                if (s.mark[0] && s.mark[1]) {
                    InteractiveState n = s.copy();
                    n.fixed = Fixed.COMMITTED;
                    n.history.add(InteractiveProgram.FIXED);
                    out.add(new Step<>(() -> "F commits", n));
                } else {
                    InteractiveState n = s.copy();
                    n.fixed = Fixed.CANCELING;
                    out.add(new Step<>(() -> "F gives up (refused, or busy past conflictTimeout) and cancels", n));
                }
            }
            case COMMITTED -> {
                for (int doc = 0; doc < 2; doc++) {
                    int d = doc;
                    if (s.mark[d]) {
                        InteractiveState n = s.copy();
                        n.mark[d] = false;
                        n.value[d] += d == 0 ? 1 : 0;
                        n.version[d] += has(InteractiveBug.VERSION_NOT_BUMPED) ? 0 : 1;
                        if (!n.mark[0] && !n.mark[1]) {
                            n.fixed = Fixed.DONE;
                        }
                        out.add(new Step<>(() -> "F is released on " + NAME[d], n));
                    }
                }
            }
            case CANCELING -> {
                for (int doc = 0; doc < 2; doc++) {
                    int d = doc;
                    if (s.mark[d]) {
                        InteractiveState n = s.copy();
                        n.mark[d] = false;
                        n.value[d] += d == 1 ? 1 : 0;
                        if (!n.mark[0] && !n.mark[1]) {
                            n.fixed = Fixed.CANCELED;
                        }
                        out.add(new Step<>(() -> "F is undone on " + NAME[d], n));
                    }
                }
                if (!s.mark[0] && !s.mark[1]) {
                    InteractiveState n = s.copy();
                    n.fixed = Fixed.CANCELED;
                    out.add(new Step<>(() -> "F is canceled", n));
                }
            }
            default -> { }
        }
    }

    /** A take whose answer was lost lands (before its attempt's deadline), or is lost for good. */
    private void wireSteps(InteractiveState s, List<Step<InteractiveState>> out) {
        Wire w = s.wire;
        if (w == null) {
            return;
        }
        InteractiveState n = s.copy();
        n.wire = null;
        boolean matches = takeMatches(n, w.doc(), w.version());
        if (matches) {
            applyTake(n, w.doc(), w.proc(), w.nonce(), w.attempt(), w.newValue(), w.undoValue(), w.version());
        }
        out.add(new Step<>(() -> "the late take of " + NAME[w.doc()] + " by P" + w.proc() + "'s attempt " + w.attempt() + " lands: "
                + (matches ? "taken" : "matches nothing"), n));
        InteractiveState lost = s.copy();
        lost.wire = null;
        out.add(new Step<>(() -> "the take of " + NAME[w.doc()] + " by P" + w.proc() + " is lost", lost));
    }

    /**
     * Anyone who meets a lock: rolls it forward if its nonce's commit counted, undoes it (before-image
     * back) once its attempt's deadline has passed without one (the tombstone or the lateness rule
     * then keeps that attempt from committing).
     */
    private void resolverSteps(InteractiveState s, List<Step<InteractiveState>> out) {
        for (int doc = 0; doc < 2; doc++) {
            int d = doc;
            int q = s.lockProc[d];
            if (q < 0) {
                continue;
            }
            if (s.lockCommitted(d)) {
                InteractiveState n = s.copy();
                n.unlock(d, false);
                if (n.procs[q].phase == Phase.RELEASE && !n.lockedBy(0, q, n.procs[q].nonce) && !n.lockedBy(1, q, n.procs[q].nonce)) {
                    n.procs[q].phase = Phase.DONE;
                }
                out.add(new Step<>(() -> "a reader rolls P" + q + "'s lock on " + NAME[d] + " forward", n));
            } else if (s.procs[q].deadlinePassed[s.lockAttempt[d]]) {
                InteractiveState n = s.copy();
                n.unlock(d, true);
                out.add(new Step<>(() -> "a resolver undoes P" + q + "'s lock on " + NAME[d] + " (past its deadline, not committed)", n));
            }
        }
    }

    @Override
    public String key(InteractiveState s) {
        return s.key();
    }

    @Override
    public String violation(InteractiveState s) {
        for (int d = 0; d < 2; d++) {
            if (s.value[d] < 0) {
                return NAME[d] + " is stored below zero: " + s.value[d];
            }
            int[] view = committed(s, d);
            if (view[0] < 0) {
                return "the committed value of " + NAME[d] + " is " + view[0];
            }
        }
        if (finished(s)) {
            return InteractiveProgram.serializable(s.history, initial, s.value);
        }
        return null;
    }

    @Override
    public String transitionViolation(InteractiveState from, InteractiveState to) {
        return null;
    }

    @Override
    public boolean finished(InteractiveState s) {
        for (Proc c : s.procs) {
            if (c.phase.live()) {
                return false;
            }
        }
        return (s.fixed == Fixed.DONE || s.fixed == Fixed.CANCELED) && s.wire == null
                && s.lockProc[0] < 0 && s.lockProc[1] < 0 && !s.mark[0] && !s.mark[1];
    }

    /** Situations a run must reach, so that the invariants are not checked in vain. */
    Map<String, Predicate<InteractiveState>> situations() {
        Map<String, Predicate<InteractiveState>> watched = new LinkedHashMap<>();
        watched.put("every interactive transaction committed", s -> {
            for (int p = 0; p < s.procs.length; p++) {
                if (s.procs[p].phase != Phase.DONE) {
                    return false;
                }
            }
            return true;
        });
        watched.put("an attempt failed", s -> s.procs[0].phase == Phase.FAIL || s.procs.length > 1 && s.procs[1].phase == Phase.FAIL);
        watched.put("a pessimistic attempt committed", s -> {
            for (int p = 0; p < s.procs.length; p++) {
                if (s.procs[p].phase == Phase.DONE && s.procs[p].pessimistic) {
                    return true;
                }
            }
            return false;
        });
        if (Arrays.stream(programs).filter(InteractiveProgram::writes).count() >= 2) {
            watched.put("a take replaced a committed transaction's lock", s -> {
                for (int d = 0; d < 2; d++) {
                    if (s.lockProc[d] >= 0 && s.lockChanged[d] && s.procs[s.lockProc[d]].phase.live() && s.overCommitted[d]) {
                        return true;
                    }
                }
                return false;
            });
        }
        watched.put("a take in doubt landed", s -> {
            for (int d = 0; d < 2; d++) {
                int q = s.lockProc[d];
                if (q >= 0 && s.lockNonce[d] == s.procs[q].nonce && s.procs[q].write[d] == InteractiveState.IN_DOUBT) {
                    return true;
                }
            }
            return false;
        });
        if (withFixed) {
            watched.put("F and an interactive transaction both committed", s -> s.history.contains(InteractiveProgram.FIXED)
                    && s.history.size() >= 2);
        }
        return watched;
    }
}
