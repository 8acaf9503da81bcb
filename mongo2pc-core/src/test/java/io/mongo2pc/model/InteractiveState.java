package io.mongo2pc.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A state of {@link InteractiveModel}: documents A and B (value, stored version, an interactive
 * lock with its before-image, the fixed-operation transfer's marker), the transfer F, the
 * interactive processes with their attempts, one write on the wire, fault budgets, and the ghost
 * history of what committed (for the serializability check). Copied on every step.
 */
final class InteractiveState {
    static final int DOCS = 2;
    static final String[] NAME = {"A", "B"};

    /** F: the fixed-operation transfer B -> A of 1 (hold B guarded by {@code B >= 1}, mark A). */
    enum Fixed { PENDING, COMMITTED, CANCELING, DONE, CANCELED }

    /** What an interactive process is doing. */
    enum Phase { READ, TAKE, CHANGE, VALIDATE, COMMIT, RELEASE, FAIL, DONE, GAVE_UP, CRASHED;
        boolean live() {
            return this != DONE && this != GAVE_UP && this != CRASHED;
        }
    }

    /** The answer of one write of an attempt. */
    static final int NONE = 0;
    static final int IN_EFFECT = 1;
    static final int IN_DOUBT = 2;
    static final int REFUSED = 3;

    /** A write delayed on the network: an optimistic take of process {@code proc}'s attempt. */
    record Wire(int proc, int nonce, int attempt, int doc, int version, int newValue, int undoValue) { }

    /** An interactive process and its current attempt. */
    static final class Proc {
        Phase phase = Phase.READ;
        int attempt = 1;
        int nonce = 1;
        boolean pessimistic;
        /** The committed value and version each document was read with; -1 unread. */
        int[] readValue = {-1, -1};
        int[] readVersion = {-1, -1};
        int readIndex;
        /** The answer of each document's write (take or change). */
        int[] write = new int[DOCS];
        boolean[] validated = new boolean[DOCS];
        /** Per attempt (index 1..): its deadline plus the clock skew has passed. */
        boolean[] deadlinePassed = new boolean[3];

        Proc copy() {
            Proc c = new Proc();
            c.phase = phase;
            c.attempt = attempt;
            c.nonce = nonce;
            c.pessimistic = pessimistic;
            c.readValue = readValue.clone();
            c.readVersion = readVersion.clone();
            c.readIndex = readIndex;
            c.write = write.clone();
            c.validated = validated.clone();
            c.deadlinePassed = deadlinePassed.clone();
            return c;
        }

        boolean passed() {
            return deadlinePassed[attempt];
        }

        @Override
        public String toString() {
            return phase + "#" + attempt + "(n" + nonce + (pessimistic ? ",locks" : "") + ") read" + Arrays.toString(readValue)
                    + "v" + Arrays.toString(readVersion) + " w" + Arrays.toString(write) + (passed() ? " late" : "");
        }

        String key() {
            StringBuilder b = new StringBuilder().append(phase.ordinal()).append(attempt).append(nonce).append(pessimistic ? 'p' : 'o');
            for (int d = 0; d < DOCS; d++) {
                b.append(readValue[d]).append(',').append(readVersion[d]).append(write[d]).append(validated[d] ? 'v' : '-');
            }
            for (boolean passed : deadlinePassed) {
                b.append(passed ? 'x' : '.');
            }
            return b.append(readIndex).toString();
        }
    }

    int[] value = new int[DOCS];
    int[] version = new int[DOCS];
    int[] lockProc = {-1, -1};
    int[] lockNonce = new int[DOCS];
    int[] lockAttempt = new int[DOCS];
    boolean[] lockChanged = new boolean[DOCS];
    int[] undoValue = new int[DOCS];
    int[] undoVersion = new int[DOCS];
    boolean[] mark = new boolean[DOCS];
    /** Ghost: the lock on the document was put there over a committed transaction's (for the watched situation only). */
    boolean[] overCommitted = new boolean[DOCS];
    Fixed fixed;
    Proc[] procs;
    Wire wire;
    int delaysLeft;
    int crashesLeft;
    /** The nonce each process committed with (0: none): the id's transaction document. */
    int[] committedNonce;
    /** Ghost: what committed, one entry each: "F", or a process's program with the values it read. */
    List<String> history = new ArrayList<>();

    InteractiveState copy() {
        InteractiveState s = new InteractiveState();
        s.value = value.clone();
        s.version = version.clone();
        s.lockProc = lockProc.clone();
        s.lockNonce = lockNonce.clone();
        s.lockAttempt = lockAttempt.clone();
        s.lockChanged = lockChanged.clone();
        s.undoValue = undoValue.clone();
        s.undoVersion = undoVersion.clone();
        s.mark = mark.clone();
        s.overCommitted = overCommitted.clone();
        s.fixed = fixed;
        s.procs = new Proc[procs.length];
        for (int p = 0; p < procs.length; p++) {
            s.procs[p] = procs[p].copy();
        }
        s.wire = wire;
        s.delaysLeft = delaysLeft;
        s.crashesLeft = crashesLeft;
        s.committedNonce = committedNonce.clone();
        s.history = new ArrayList<>(history);
        return s;
    }

    boolean fixedCommitted() {
        return fixed == Fixed.COMMITTED || fixed == Fixed.DONE;
    }

    boolean lockedBy(int d, int p, int nonce) {
        return lockProc[d] == p && lockNonce[d] == nonce;
    }

    /** True if the lock on {@code d} is of a committed transaction (the id's document names its nonce). */
    boolean lockCommitted(int d) {
        return lockProc[d] >= 0 && committedNonce[lockProc[d]] == lockNonce[d];
    }

    void lock(int d, int p, int nonce, int attempt) {
        lockProc[d] = p;
        lockNonce[d] = nonce;
        lockAttempt[d] = attempt;
        lockChanged[d] = false;
        overCommitted[d] = false;
    }

    /** Removes the lock of {@code d}; with {@code restore}, puts its before-image back first (an undo of a change). */
    void unlock(int d, boolean restore) {
        if (restore && lockChanged[d]) {
            value[d] = undoValue[d];
            version[d] = undoVersion[d];
        }
        lockProc[d] = -1;
        lockNonce[d] = 0;
        lockAttempt[d] = 0;
        lockChanged[d] = false;
        undoValue[d] = 0;
        undoVersion[d] = 0;
        overCommitted[d] = false;
    }

    String key() {
        StringBuilder b = new StringBuilder();
        for (int d = 0; d < DOCS; d++) {
            b.append(value[d]).append(',').append(version[d]).append(',').append(lockProc[d]).append(lockNonce[d]).append(lockAttempt[d])
                    .append(lockChanged[d] ? 'c' : '-').append(undoValue[d]).append(',').append(undoVersion[d]).append(mark[d] ? 'm' : '-')
                    .append(overCommitted[d] ? 'o' : '-').append(';');
        }
        b.append(fixed.ordinal()).append('|');
        for (Proc c : procs) {
            b.append(c.key()).append('|');
        }
        b.append(wire).append(delaysLeft).append(crashesLeft).append(Arrays.toString(committedNonce));
        List<String> sorted = new ArrayList<>(history);
        Collections.sort(sorted);
        return b.append(sorted).toString();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int d = 0; d < DOCS; d++) {
            b.append(NAME[d]).append('=').append(value[d]).append(" v").append(version[d]);
            if (lockProc[d] >= 0) {
                b.append(" lock(P").append(lockProc[d]).append(" n").append(lockNonce[d]).append(" #").append(lockAttempt[d])
                        .append(lockChanged[d] ? " undo " + undoValue[d] + " v" + undoVersion[d] : "").append(')');
            }
            b.append(mark[d] ? " marker F" : "").append("; ");
        }
        b.append("F ").append(fixed);
        for (int p = 0; p < procs.length; p++) {
            b.append("; P").append(p).append(' ').append(procs[p]);
        }
        return b.append(wire == null ? "" : "; wire " + wire).append("; committed ").append(history).toString();
    }
}
