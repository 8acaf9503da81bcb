package io.mongo2pc.model;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import static io.mongo2pc.model.ConflictState.APPLIED;
import static io.mongo2pc.model.ConflictState.CANCELED;
import static io.mongo2pc.model.ConflictState.CANCELING;
import static io.mongo2pc.model.ConflictState.DONE;
import static io.mongo2pc.model.ConflictState.END;
import static io.mongo2pc.model.ConflictState.EXPIRED;
import static io.mongo2pc.model.ConflictState.GONE;
import static io.mongo2pc.model.ConflictState.IN_DOUBT;
import static io.mongo2pc.model.ConflictState.NO;
import static io.mongo2pc.model.ConflictState.NONE;
import static io.mongo2pc.model.ConflictState.OLDER;
import static io.mongo2pc.model.ConflictState.PENDING;
import static io.mongo2pc.model.ConflictState.REFUSED;
import static io.mongo2pc.model.ConflictState.ROUND;
import static io.mongo2pc.model.ConflictState.START;
import static io.mongo2pc.model.ConflictState.UNDO_CANCEL;
import static io.mongo2pc.model.ConflictState.UNDO_YIELD;
import static io.mongo2pc.model.ConflictState.WAITING;
import static io.mongo2pc.model.ConflictState.WAIT_OLDER;
import static io.mongo2pc.model.ConflictState.YOUNGER;

/**
 * An exhaustive model of the conflict rule of round 1 (docs/TWO-ROUND.md, "Conflicts between open
 * transactions"; docs/MODEL.md): transactions that race for the same documents, each preparing
 * every document at once, as payers of one order do. A <i>take</i> document (the order, the
 * payment's insert) is locked by one transaction and written once under a guard the write makes
 * false; a <i>hold</i> document (the account) holds 1 of a balance of 1 under {@code balance >= 1}.
 * So at most one transaction can commit, and the guarantee checked is that one does.
 *
 * <p>A prepare refused by another open transaction's lock or hold is a conflict: the transaction
 * waits (sends it again) if every holder is younger (T1 is the oldest, by its priority), else it
 * yields: once every prepare of its round is answered or waited out (its deadline passed), it
 * undoes the round under its deadline, waits until no older holder is left on the document it met,
 * renews and prepares everything again. A refusal by committed state (the guard fails and no open
 * transaction holds the document) cancels. Faults: every interleaving; prepares delayed on the wire
 * and answers lost (the owner waits such a prepare out before it decides anything from it); pauses
 * (time passes); crashes; takeovers by recovery once an owner's lease ran out (rolled forward if
 * every prepare is in effect, else canceled). Undos and the commit are atomic owner steps.
 */
final class ConflictModel implements Model<ConflictState> {
    final Set<ConflictBug> bugs;
    final int txs;
    /** Per document: 't' for a take, 'h' for a hold. */
    final String kinds;
    final int lease;
    final int crashes;
    final int losses;
    /** Recovery may take over a transaction whose lease ran out (and the owner, fenced, stops). */
    final boolean takeovers;
    private final ConflictServer server = new ConflictServer(this);
    private final ConflictInvariants invariants = new ConflictInvariants(this);

    ConflictModel(Set<ConflictBug> bugs, int txs, String kinds, int lease, int crashes, int losses, boolean takeovers) {
        if (txs < 2 || txs > 3 || kinds.isEmpty() || !kinds.matches("[th]+") || lease < 1 || (crashes > 0 && !takeovers)) {
            throw new IllegalArgumentException("need 2..3 transactions, documents of kinds t/h, a lease, and takeovers for crashes");
        }
        this.bugs = bugs.isEmpty() ? EnumSet.noneOf(ConflictBug.class) : EnumSet.copyOf(bugs);
        this.txs = txs;
        this.kinds = kinds;
        this.lease = lease;
        this.crashes = crashes;
        this.losses = losses;
        this.takeovers = takeovers;
    }

    boolean takes(int d) {
        return kinds.charAt(d) == 't';
    }

    String name(int d) {
        return takes(d) ? (kinds.indexOf('t') == d ? "O" : "P") : "A";
    }

    int docs() {
        return kinds.length();
    }

    @Override
    public List<ConflictState> initialStates() {
        ConflictState s = new ConflictState();
        s.model = this;
        s.phase = new int[txs];
        s.tx = new int[txs];
        s.left = new int[txs];
        s.answer = new int[txs][docs()];
        s.wire = new int[txs][docs()];
        s.sent = new int[txs][docs()];
        for (int[] w : s.wire) {
            java.util.Arrays.fill(w, NO);
        }
        s.older = new int[txs];
        s.crashed = new boolean[txs];
        s.takenOver = new boolean[txs];
        s.lock = new int[docs()];
        java.util.Arrays.fill(s.lock, NO);
        s.set = new boolean[docs()];
        s.balance = new int[docs()];
        for (int d = 0; d < docs(); d++) {
            s.balance[d] = takes(d) ? 0 : 1;
        }
        s.holds = new int[docs()];
        s.crashesLeft = crashes;
        s.lossesLeft = losses;
        return List.of(s);
    }

    @Override
    public List<Step<ConflictState>> successors(ConflictState s) {
        List<Step<ConflictState>> out = new ArrayList<>();
        for (int t = 0; t < txs; t++) {
            owner(s, t, out);
            for (int d = 0; d < docs(); d++) {
                if (s.wire[t][d] != NO) {
                    server.arrive(s, t, d, out);
                }
                if (s.answer[t][d] == WAITING && s.lossesLeft > 0) {
                    int tt = t;
                    int dd = d;
                    ConflictState n = s.copy();
                    n.answer[t][d] = IN_DOUBT;
                    n.lossesLeft--;
                    out.add(new Step<>(() -> "T" + (tt + 1) + "'s prepare of " + name(dd) + " gets no answer (in doubt)", n));
                }
                if (s.tx[t] == APPLIED && s.holds(this, t, d)) {
                    int tt = t;
                    int dd = d;
                    ConflictState n = s.copy();
                    server.release(n, t, d);
                    out.add(new Step<>(() -> "anyone releases T" + (tt + 1) + "'s " + name(dd), n));
                }
            }
            faults(s, t, out);
        }
        tick(s, out);
        return out;
    }

    // ---- the owner -------------------------------------------------------------------------

    private void owner(ConflictState s, int t, List<Step<ConflictState>> out) {
        String who = "T" + (t + 1);
        switch (s.phase[t]) {
            case START -> {
                ConflictState n = s.copy();
                n.tx[t] = PENDING;
                sendAll(n, t);
                out.add(new Step<>(() -> who + " starts: every prepare at once", n));
            }
            case ROUND -> decide(s, t, who, out);
            case UNDO_YIELD, UNDO_CANCEL -> undo(s, t, who, out);
            case WAIT_OLDER -> {
                if (s.ended(s.older[t])) {
                    ConflictState n = s.copy();
                    n.older[t] = 0;
                    sendAll(n, t);
                    out.add(new Step<>(() -> who + ": the older holders finished, renews and prepares everything again", n));
                }
                if (s.left[t] < lease) {
                    ConflictState n = s.copy();
                    n.left[t] = lease;
                    out.add(new Step<>(() -> who + " renews its lease while it waits", n));
                }
            }
            default -> { }
        }
    }

    /** The owner's decision once no answer is awaited (the code decides prepare by prepare; any order is allowed here). */
    private void decide(ConflictState s, int t, String who, List<Step<ConflictState>> out) {
        boolean unsettled = false;
        boolean refused = false;
        boolean older = false;
        boolean allDone = true;
        List<Integer> again = new ArrayList<>();
        for (int d = 0; d < docs(); d++) {
            int a = s.answer[t][d];
            if (a == WAITING) {
                return;
            }
            allDone &= a == DONE;
            unsettled |= a == IN_DOUBT && s.sent[t][d] > 0;
            refused |= a == REFUSED;
            older |= a == OLDER && !has(ConflictBug.WAIT_WITHOUT_PRIORITY);
            if (a == EXPIRED || a == YOUNGER || (a == OLDER && has(ConflictBug.WAIT_WITHOUT_PRIORITY))
                    || (a == IN_DOUBT && s.sent[t][d] == 0)) {
                again.add(d);
            }
        }
        if (refused) {
            if (!unsettled) {
                ConflictState n = s.copy();
                n.phase[t] = UNDO_CANCEL;
                n.tx[t] = CANCELING;
                out.add(new Step<>(() -> who + ": a refusal by committed state stands, cancels", n));
            }
            return;
        }
        if (older) {
            if (!unsettled || has(ConflictBug.YIELD_BEFORE_SETTLED)) {
                ConflictState n = s.copy();
                n.phase[t] = UNDO_YIELD;
                for (int d = 0; d < docs(); d++) {
                    n.answer[t][d] = NONE;
                }
                out.add(new Step<>(() -> who + " met an older holder: yields (undoes its round)", n));
            }
            return;
        }
        if (!again.isEmpty()) {
            ConflictState n = s.copy();
            n.left[t] = lease;
            for (int d : again) {
                send(n, t, d);
            }
            out.add(new Step<>(() -> who + " renews and sends again " + again.stream().map(this::name).toList(), n));
        }
        if (allDone) {
            ConflictState n = s.copy();
            n.tx[t] = APPLIED;
            n.phase[t] = END;
            out.add(new Step<>(() -> who + " commits", n));
        }
    }

    /** The owner's undo, one document per step, under its deadline (renewed first when passed). */
    private void undo(ConflictState s, int t, String who, List<Step<ConflictState>> out) {
        if (s.left[t] == 0) {
            ConflictState n = s.copy();
            n.left[t] = lease;
            out.add(new Step<>(() -> who + " renews before its undo", n));
            return;
        }
        boolean any = false;
        for (int d = 0; d < docs(); d++) {
            if (s.holds(this, t, d)) {
                any = true;
                int dd = d;
                ConflictState n = s.copy();
                server.giveBack(n, t, d);
                out.add(new Step<>(() -> who + " undoes " + name(dd), n));
            }
        }
        if (!any) {
            ConflictState n = s.copy();
            if (s.phase[t] == UNDO_YIELD) {
                n.phase[t] = WAIT_OLDER;
                out.add(new Step<>(() -> who + " holds nothing: waits for the older holder", n));
            } else {
                n.phase[t] = END;
                n.tx[t] = CANCELED;
                Step<ConflictState> step = new Step<>(() -> who + " canceled", n);
                out.add(step);
            }
        }
    }

    private void sendAll(ConflictState n, int t) {
        n.phase[t] = ROUND;
        n.left[t] = lease;
        for (int d = 0; d < docs(); d++) {
            send(n, t, d);
        }
    }

    private void send(ConflictState n, int t, int d) {
        n.wire[t][d] = n.left[t];
        n.sent[t][d] = n.left[t];
        n.answer[t][d] = WAITING;
    }

    // ---- faults and time -------------------------------------------------------------------

    private void faults(ConflictState s, int t, List<Step<ConflictState>> out) {
        String who = "T" + (t + 1);
        if (s.crashesLeft > 0 && s.phase[t] != START && s.phase[t] != END && s.phase[t] != GONE) {
            ConflictState n = s.copy();
            forget(n, t);
            n.crashed[t] = true;
            n.crashesLeft--;
            out.add(new Step<>(() -> who + "'s owner crashes", n));
        }
        if (takeovers && (s.tx[t] == PENDING || s.tx[t] == CANCELING) && s.phase[t] != START && s.phase[t] != END
                && s.left[t] == 0) {
            ConflictState n = s.copy();
            forget(n, t);
            n.takenOver[t] = true;
            boolean all = s.tx[t] == PENDING;
            for (int d = 0; d < docs(); d++) {
                all &= s.holds(this, t, d);
            }
            if (all) {
                n.tx[t] = APPLIED;
            } else {
                for (int d = 0; d < docs(); d++) {
                    if (n.holds(this, t, d)) {
                        server.giveBack(n, t, d);
                    }
                }
                n.tx[t] = CANCELED;
            }
            boolean rolled = all;
            out.add(new Step<>(() -> "recovery takes " + who + " over after its lease: " + (rolled ? "every prepare in effect, commits"
                    : "canceled, undone"), n));
        }
    }

    /** The owner stops (crashed, or fenced by a takeover) and forgets; its prepares on the wire may still run. */
    private void forget(ConflictState n, int t) {
        n.phase[t] = GONE;
        n.older[t] = 0;
        for (int d = 0; d < docs(); d++) {
            n.answer[t][d] = NONE;
            n.sent[t][d] = 0;
        }
    }

    /** One tick: every deadline one step nearer; a prepare nobody waits for is dropped once it can no longer land. */
    private void tick(ConflictState s, List<Step<ConflictState>> out) {
        ConflictState n = s.copy();
        boolean moved = false;
        for (int t = 0; t < txs; t++) {
            boolean open = n.tx[t] == PENDING || n.tx[t] == CANCELING;
            if (n.left[t] > 0 && open && n.phase[t] != START) {
                n.left[t]--; // the lease runs out also while its owner is crashed
                moved = true;
            }
            for (int d = 0; d < docs(); d++) {
                if (n.sent[t][d] > 0) {
                    n.sent[t][d]--;
                    moved = true;
                }
                if (n.wire[t][d] > 0) {
                    n.wire[t][d]--;
                    moved = true;
                }
                if (n.wire[t][d] == 0 && n.answer[t][d] != WAITING) {
                    n.wire[t][d] = NO;
                }
            }
            if (!open) {
                n.left[t] = 0;
            }
        }
        if (moved) {
            out.add(new Step<>(() -> "time passes", n));
        }
    }

    boolean has(ConflictBug bug) {
        return bugs.contains(bug);
    }

    // ---- what must hold: ConflictInvariants ------------------------------------------------

    @Override
    public String key(ConflictState s) {
        return s.key();
    }

    @Override
    public String violation(ConflictState s) {
        return invariants.violation(s);
    }

    @Override
    public String transitionViolation(ConflictState from, ConflictState to) {
        return invariants.transitionViolation(from, to);
    }

    @Override
    public boolean finished(ConflictState s) {
        return invariants.finished(s);
    }

    /** Situations a run must reach, so that no invariant holds in vain. */
    Map<String, Predicate<ConflictState>> situations() {
        return invariants.situations();
    }
}
