package io.mongo2pc.model;

import io.mongo2pc.model.InteractiveState.Phase;
import io.mongo2pc.model.InteractiveState.Proc;
import io.mongo2pc.model.InteractiveState.Wire;
import io.mongo2pc.model.Model.Step;

import java.util.List;

import static io.mongo2pc.model.InteractiveState.IN_DOUBT;
import static io.mongo2pc.model.InteractiveState.IN_EFFECT;
import static io.mongo2pc.model.InteractiveState.NAME;
import static io.mongo2pc.model.InteractiveState.NONE;
import static io.mongo2pc.model.InteractiveState.REFUSED;

/**
 * The steps of an interactive process of {@link InteractiveModel} (docs/INTERACTIVE.md): an attempt
 * reads (optimistically: the committed view and version; after a lost conflict: taking each
 * document, wait-die on the processes' priorities, process 0 the older), then takes what it writes
 * in one write each checked against the version read (or changes what it took), checks what it
 * only read, and commits; an attempt that fails waits out its write in doubt, undoes by its nonce,
 * and the next one runs the body again with a nonce of its own.
 */
final class InteractiveAttempts {
    private final InteractiveModel m;

    InteractiveAttempts(InteractiveModel m) {
        this.m = m;
    }

    void steps(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        switch (s.procs[p].phase) {
            case READ -> read(s, p, out);
            case TAKE -> {
                take(s, p, out);
                if (m.has(InteractiveBug.VALIDATION_BEFORE_LOCKS)) {
                    validate(s, p, out);
                }
            }
            case CHANGE -> change(s, p, out);
            case VALIDATE -> validate(s, p, out);
            case COMMIT -> commit(s, p, out);
            case RELEASE -> release(s, p, out);
            case FAIL -> fail(s, p, out);
            default -> { }
        }
    }

    private InteractiveProgram program(int p) {
        return m.programs[p];
    }

    private void read(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        Proc c = s.procs[p];
        int d = program(p).reads[c.readIndex];
        if (!c.pessimistic) {
            InteractiveState n = s.copy();
            int[] view = m.committed(n, d);
            record(n, p, d, view[0], view[1]);
            out.add(new Step<>(() -> "P" + p + " reads " + NAME[d] + " = " + view[0] + " (version " + view[1] + ")", n));
            return;
        }
        if (c.passed()) {
            InteractiveState n = s.copy();
            n.procs[p].phase = Phase.FAIL;
            out.add(new Step<>(() -> "P" + p + "'s take of " + NAME[d] + " misses its deadline: the attempt fails", n));
            return;
        }
        boolean drained = !s.mark[d] || m.has(InteractiveBug.READ_BEFORE_DRAINED);
        if (s.lockedBy(d, p, c.nonce) && drained || s.lockProc[d] < 0 && !s.mark[d]) {
            // Taken now, or taken before and drained of F's marker (or a copy of a take that landed): as stored.
            InteractiveState n = s.copy();
            if (n.lockProc[d] < 0) {
                n.lock(d, p, c.nonce, c.attempt);
            }
            record(n, p, d, n.value[d], n.version[d]);
            out.add(new Step<>(() -> "P" + p + " takes and reads " + NAME[d] + " = " + n.value[d], n));
            return;
        }
        if (s.lockProc[d] < 0) {
            // F's marker is there: the lock goes on anyway (no new prepare can come), then the marker drains.
            InteractiveState n = s.copy();
            n.lock(d, p, c.nonce, c.attempt);
            out.add(new Step<>(() -> "P" + p + " takes " + NAME[d] + " with F's marker on it; waits for it to drain", n));
            return;
        }
        int holder = s.lockProc[d];
        boolean holdsAny = s.lockedBy(0, p, c.nonce) || s.lockedBy(1, p, c.nonce);
        boolean dies = holder == p ? s.lockedBy(d, p, c.nonce) && s.mark[d] // draining: gives up after a while (F may wait for it)
                : !s.lockCommitted(d) && p > holder && holdsAny; // younger, holding something: ends (holding nothing: waits)
        if (dies) {
            InteractiveState n = s.copy();
            n.procs[p].phase = Phase.FAIL;
            String why = holder != p ? "P" + holder + " (older) holds " + NAME[d] : NAME[d] + " still carries F's marker";
            out.add(new Step<>(() -> "P" + p + " gives up waiting: " + why + "; the attempt fails", n));
        }
    }

    private void record(InteractiveState n, int p, int d, int value, int version) {
        Proc c = n.procs[p];
        c.readValue[d] = value;
        c.readVersion[d] = version;
        c.readIndex++;
        if (c.readIndex == program(p).reads.length) {
            int[] w = program(p).writes(c.readValue);
            c.phase = w[0] < 0 && w[1] < 0 ? Phase.VALIDATE : c.pessimistic ? Phase.CHANGE : Phase.TAKE;
            if (c.phase == Phase.VALIDATE) {
                afterValidation(n, p);
            }
        }
    }

    private int[] written(InteractiveState s, int p) {
        return program(p).writes(s.procs[p].readValue);
    }

    /** Round 1 of an optimistic attempt: each document written taken and changed in one write, checked against the version read. */
    private void take(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        Proc c = s.procs[p];
        int[] w = written(s, p);
        for (int doc = 0; doc < InteractiveState.DOCS; doc++) {
            int d = doc;
            if (w[d] < 0 || c.write[d] != NONE) {
                continue;
            }
            InteractiveState n = s.copy();
            String result = takeNow(n, p, d, w[d]);
            afterWrites(n, p);
            out.add(new Step<>(() -> "P" + p + " takes " + NAME[d] + " := " + w[d] + " if version " + c.readVersion[d] + ": " + result, n));
            if (s.delaysLeft > 0 && s.wire == null) {
                InteractiveState lost = s.copy();
                lost.delaysLeft--;
                lost.wire = new Wire(p, c.nonce, c.attempt, d, c.readVersion[d], w[d], c.readValue[d]);
                lost.procs[p].write[d] = IN_DOUBT;
                afterWrites(lost, p);
                out.add(new Step<>(() -> "P" + p + " sends its take of " + NAME[d] + "; no answer (in doubt, still on the wire)", lost));
            }
        }
    }

    private String takeNow(InteractiveState n, int p, int d, int newValue) {
        Proc c = n.procs[p];
        if (c.passed()) {
            c.write[d] = REFUSED;
            return "expired";
        }
        if (m.takeMatches(n, d, c.readVersion[d])) {
            m.applyTake(n, d, p, c.nonce, c.attempt, newValue, c.readValue[d], c.readVersion[d]);
            c.write[d] = IN_EFFECT;
            return "taken";
        }
        if (n.lockedBy(d, p, c.nonce)) {
            c.write[d] = IN_EFFECT;
            return "ours already";
        }
        c.write[d] = REFUSED;
        return "refused (changed or held)";
    }

    /** A pessimistic attempt's writes: each document it took is changed under its lock, its before-image kept. */
    private void change(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        Proc c = s.procs[p];
        int[] w = written(s, p);
        for (int doc = 0; doc < InteractiveState.DOCS; doc++) {
            int d = doc;
            if (w[d] < 0 || c.write[d] != NONE) {
                continue;
            }
            InteractiveState n = s.copy();
            Proc nc = n.procs[p];
            String result;
            if (nc.passed()) {
                nc.write[d] = REFUSED;
                result = "expired";
            } else if (n.lockedBy(d, p, nc.nonce) && n.mark[d]) {
                nc.write[d] = REFUSED; // the change requires the document drained of markers
                result = "a marker is still there";
            } else if (n.lockedBy(d, p, nc.nonce)) {
                if (!n.lockChanged[d]) {
                    n.lockChanged[d] = true;
                    n.undoValue[d] = n.value[d];
                    n.undoVersion[d] = n.version[d];
                    n.value[d] = w[d];
                    n.version[d]++;
                }
                nc.write[d] = IN_EFFECT;
                result = "changed";
            } else {
                nc.write[d] = REFUSED;
                result = "its lock is gone";
            }
            afterWrites(n, p);
            out.add(new Step<>(() -> "P" + p + " changes " + NAME[d] + " := " + w[d] + " under its lock: " + result, n));
        }
    }

    /** Once every write is answered: all in effect -> check what was only read; anything else -> the attempt fails. */
    private void afterWrites(InteractiveState n, int p) {
        Proc c = n.procs[p];
        int[] w = written(n, p);
        boolean allInEffect = true;
        for (int d = 0; d < InteractiveState.DOCS; d++) {
            if (w[d] >= 0 && c.write[d] == NONE) {
                return;
            }
            allInEffect &= w[d] < 0 || c.write[d] == IN_EFFECT;
        }
        c.phase = allInEffect ? Phase.VALIDATE : Phase.FAIL;
        if (allInEffect) {
            afterValidation(n, p);
        }
    }

    /**
     * The documents the attempt only read and did not take. Those a pessimistic attempt took are not
     * checked, as in the code, even if its lock is no longer there: nobody may remove the lock of an
     * attempt not committed before its deadline, and past it the attempt cannot commit.
     */
    private boolean toCheck(InteractiveState s, int p, int d) {
        Proc c = s.procs[p];
        return c.readValue[d] >= 0 && written(s, p)[d] < 0 && !c.pessimistic && !c.validated[d]
                && !m.has(InteractiveBug.READ_NOT_VALIDATED);
    }

    private void validate(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        Proc c = s.procs[p];
        int[] w = written(s, p);
        boolean readOnly = w[0] < 0 && w[1] < 0;
        for (int doc = 0; doc < InteractiveState.DOCS; doc++) {
            int d = doc;
            if (!toCheck(s, p, d)) {
                continue;
            }
            int[] view = m.committed(s, d);
            boolean locksCount = (!readOnly || m.has(InteractiveBug.READ_ONLY_CHECKS_LOCKS)) && !m.has(InteractiveBug.VALIDATION_IGNORES_LOCKS);
            // A committed transaction's lock (its release still to come) holds nothing back: its change is in the version.
            boolean held = locksCount && s.lockProc[d] >= 0 && !s.lockedBy(d, p, c.nonce) && !s.lockCommitted(d);
            boolean ok = view[1] == c.readVersion[d] && !held;
            InteractiveState n = s.copy();
            if (ok) {
                n.procs[p].validated[d] = true;
                if (n.procs[p].phase == Phase.VALIDATE) {
                    afterValidation(n, p);
                }
            } else {
                n.procs[p].phase = Phase.FAIL;
            }
            out.add(new Step<>(() -> "P" + p + " checks " + NAME[d] + ": version " + view[1] + (held ? ", held by P" + s.lockProc[d] : "")
                    + (ok ? ": as read" : ": not as read (version " + c.readVersion[d] + "), the attempt fails"), n));
        }
    }

    /** In VALIDATE: once nothing is left to check, a read-only attempt ends (releasing its takes), another commits. */
    private void afterValidation(InteractiveState n, int p) {
        for (int d = 0; d < InteractiveState.DOCS; d++) {
            if (toCheck(n, p, d)) {
                return;
            }
        }
        Proc c = n.procs[p];
        int[] w = written(n, p);
        if (w[0] < 0 && w[1] < 0) {
            n.history.add(program(p).entry(c.readValue));
            c.phase = Phase.RELEASE;
            releasedAll(n, p);
        } else {
            c.phase = Phase.COMMIT;
        }
    }

    private void commit(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        InteractiveState n = s.copy();
        Proc c = n.procs[p];
        if (c.passed()) {
            c.phase = Phase.FAIL;
            out.add(new Step<>(() -> "P" + p + "'s commit insert lands after its deadline: canceled", n));
            return;
        }
        n.committedNonce[p] = c.nonce;
        n.history.add(program(p).entry(c.readValue));
        c.phase = Phase.RELEASE;
        releasedAll(n, p);
        out.add(new Step<>(() -> "P" + p + " commits (commit insert, nonce " + c.nonce + ")", n));
    }

    private void release(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        if (!s.lockedBy(0, p, s.procs[p].nonce) && !s.lockedBy(1, p, s.procs[p].nonce)) {
            InteractiveState n = s.copy();
            n.procs[p].phase = Phase.DONE;
            out.add(new Step<>(() -> "P" + p + " finds its locks released by others", n));
            return;
        }
        for (int doc = 0; doc < InteractiveState.DOCS; doc++) {
            int d = doc;
            if (s.lockedBy(d, p, s.procs[p].nonce)) {
                InteractiveState n = s.copy();
                n.unlock(d, false);
                releasedAll(n, p);
                out.add(new Step<>(() -> "P" + p + " releases " + NAME[d], n));
            }
        }
    }

    private static void releasedAll(InteractiveState n, int p) {
        for (int d = 0; d < InteractiveState.DOCS; d++) {
            if (n.lockedBy(d, p, n.procs[p].nonce)) {
                return;
            }
        }
        n.procs[p].phase = Phase.DONE;
    }

    /** A failed attempt: waits out a write in doubt (its deadline), undoes by its nonce, then the next attempt or the timeout. */
    private void fail(InteractiveState s, int p, List<Step<InteractiveState>> out) {
        Proc c = s.procs[p];
        boolean inDoubt = c.write[0] == IN_DOUBT || c.write[1] == IN_DOUBT;
        boolean waitsOut = !m.has(InteractiveBug.POISONED_ATTEMPT) && !m.has(InteractiveBug.RETRY_WITHOUT_WAITING_OUT);
        if (inDoubt && waitsOut && !c.passed()) {
            return; // until its deadline plus the skew: no copy of the write can land after that
        }
        boolean undone = true;
        for (int doc = 0; doc < InteractiveState.DOCS; doc++) {
            int d = doc;
            if (s.lockedBy(d, p, c.nonce)) {
                undone = false;
                InteractiveState n = s.copy();
                n.unlock(d, true);
                out.add(new Step<>(() -> "P" + p + " undoes " + NAME[d] + " (by its nonce " + c.nonce + ")", n));
            }
        }
        if (!undone) {
            return;
        }
        InteractiveState n = s.copy();
        Proc next = n.procs[p];
        if (c.attempt >= m.attempts) {
            next.phase = Phase.GAVE_UP;
            out.add(new Step<>(() -> "P" + p + " times out: a conflict exception, nothing written", n));
            return;
        }
        next.attempt++;
        next.nonce = m.has(InteractiveBug.POISONED_ATTEMPT) ? c.nonce : next.attempt;
        next.pessimistic = true;
        next.phase = Phase.READ;
        next.readIndex = 0;
        next.readValue = new int[] {-1, -1};
        next.readVersion = new int[] {-1, -1};
        next.write = new int[InteractiveState.DOCS];
        next.validated = new boolean[InteractiveState.DOCS];
        out.add(new Step<>(() -> "P" + p + " backs off and runs its body again (attempt " + next.attempt + ", takes what it reads)", n));
    }
}
