package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.ProtocolServer.Result;
import io.mongo2pc.model.ProtocolState.Coordinator;
import io.mongo2pc.model.ProtocolState.Kind;
import io.mongo2pc.model.ProtocolState.Write;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A small, exhaustive model of the protocol in {@code io.mongo2pc.internal}: one transfer of 1 from
 * account A to account B (the bank's two operations: debit A guarded by {@code balance >= 1}, then
 * credit B), one transaction document, two coordinator processes, a discrete server clock. States
 * and their transition table are the production {@link TransactionState}.
 *
 * <p>Every server-side action is one atomic single-document write with the guard conditions of the
 * code it names ({@code TransactionStore.*}, {@code Participants.*}); every coordinator-side rule
 * follows {@code Coordinator.drive}. A coordinator first <em>prepares</em> a write (computes it from what
 * it knows: epoch, state, deadline) and holds it in hand; the write is <em>delivered</em> later, at
 * whatever the clock and the documents are then. Between the two it may pause for any number of
 * ticks, crash (the write stays in the network as an orphan and may still arrive), or lose the
 * acknowledgement (the write takes effect, the Retrier sends it again).
 *
 * <p>Time is kept relative to "now" so that the state space is finite without bounding time:
 * the transaction's age ({@code now - lastModified}, saturated at lease + 1) and every deadline's
 * distance ({@code deadline - now}, saturated at -skew - 1). Epochs are renumbered canonically (order,
 * equality and "is the next epoch" kept). So the search covers unbounded time and unboundedly many
 * takeovers; only crashes are bounded.
 *
 * <p>Here: the configuration, the network (which process steps, crashes, lost acknowledgements,
 * orphans arriving, the clock's tick). The rest: {@link ProtocolState} (the documents, the
 * coordinators, the writes, the canonical form), {@link ProtocolProcesses} (what a coordinator
 * sends next and what it makes of the reply), {@link ProtocolServer} (every write with its filter
 * and update), {@link ProtocolInvariants}, {@link Bug}.
 */
final class ProtocolModel implements Model<ProtocolState> {

    // ---- configuration -----------------------------------------------------------------------

    /** Recovery's olderThan, only used by {@link Bug#TAKEOVER_IGNORES_LEASE}. */
    static final int OLDER_THAN = 1;
    static final int OPS = 2;
    static final String[] ACCOUNT = {"A", "B"};
    /** The transfer's operations: op 0 debits A by 1 (guard balance >= 1), op 1 credits B by 1. */
    static final int[] DELTA = {-1, +1};

    final Set<Bug> bugs;
    final int crashes;
    final int[] initialBalances;
    /** The lease, in ticks (config.lease()). */
    final int lease;
    /** config.maxClockSkew(): subtracted from every deadline. */
    final int skew;
    /** How far the participants' server clock runs behind the coordinator collection's (0..skew). */
    final int behind;
    /**
     * Ages saturate here: no comparison in the protocol looks further back (a deadline computed
     * from a stamp this old has passed, by more than any clock difference).
     */
    final int maxAge;
    /** Deadline distances saturate here (passed by more than any clock difference). */
    final int minLeft;
    /**
     * True: every write is first prepared into the coordinator's hand, then sent. False (the
     * default, same behaviours, far fewer states): an owner's write is prepared and sent in one
     * step, because its parameters (epoch, state, deadline distance) are a function of the owner's
     * frozen local state, so "holding it in hand" is the same as not having computed it yet; only
     * a crash can tell the difference, and a crash puts any write the owner could send next on the
     * wire. A takeover's read and its CAS stay separate steps (what was read is not local state).
     */
    final boolean explicitHands;
    private final ProtocolServer server = new ProtocolServer(this);
    private final ProtocolProcesses processes = new ProtocolProcesses(this);
    private final ProtocolInvariants invariants = new ProtocolInvariants(this);

    ProtocolModel(Set<Bug> bugs, int crashes, boolean explicitHands, int lease, int skew, int behind, int... initialBalances) {
        if (behind > skew || skew >= lease) {
            throw new IllegalArgumentException("need 0 <= behind <= skew < lease, got " + behind + ", " + skew + ", " + lease);
        }
        this.explicitHands = explicitHands;
        this.bugs = bugs.isEmpty() ? EnumSet.noneOf(Bug.class) : EnumSet.copyOf(bugs);
        this.crashes = crashes;
        this.initialBalances = initialBalances;
        this.lease = lease;
        this.skew = skew;
        this.behind = behind;
        this.maxAge = lease + 1;
        this.minLeft = -skew - 1;
    }

    boolean has(Bug bug) {
        return bugs.contains(bug);
    }

    // ---- the network: steps, crashes, lost acknowledgements, orphans, time ---------------------

    @Override
    public List<ProtocolState> initialStates() {
        ProtocolState s = new ProtocolState();
        s.balance = initialBalances.clone();
        s.crashesLeft = crashes;
        return List.of(s.normalize());
    }

    @Override
    public List<Step<ProtocolState>> successors(ProtocolState s) {
        List<Step<ProtocolState>> out = new ArrayList<>();
        for (int proc = 0; proc < s.co.length; proc++) {
            final int p = proc;
            Coordinator c = s.co[p];
            if (c.hand() == null) {
                for (Write w : processes.prepare(s, c)) {
                    if (explicitHands || w.kind() == Kind.TAKEOVER) {
                        ProtocolState n = s.copy();
                        n.co[p] = c.withHand(w);
                        out.add(new Step<>(() -> "P" + p + " prepares " + w, n.normalize()));
                    } else {
                        send(s, p, c, w, out);
                    }
                }
            } else {
                send(s, p, c, c.hand(), out);
            }
            if (s.crashesLeft > 0 && (c.owner() || c.hand() != null)) {
                // Crash and restart with no memory. A write in hand is already on the wire; without
                // explicit hands, an owner's write in hand is any write it could send next.
                List<Write> onTheWire = new ArrayList<>();
                onTheWire.add(null);
                if (c.hand() != null) {
                    onTheWire.add(c.hand());
                } else if (!explicitHands) {
                    onTheWire.addAll(processes.prepare(s, c));
                }
                for (Write w : onTheWire) {
                    if (w == null && c.hand() != null) {
                        continue;
                    }
                    ProtocolState n = s.copy();
                    n.crashesLeft--;
                    if (w != null) {
                        n.orphans.add(w);
                    }
                    n.co[p] = Coordinator.IDLE;
                    if (n.docOwner == p) {
                        n.docOwner = ProtocolState.CRASHED_OWNER; // the restarted process is a new incarnation, with a new owner id
                    }
                    out.add(new Step<>(() -> "P" + p + " crashes and restarts" + (w != null ? " (its " + w + " is still on the wire)" : ""),
                            n.normalize()));
                }
            }
        }
        for (int i = 0; i < s.orphans.size(); i++) {
            if (i > 0 && s.orphans.get(i).equals(s.orphans.get(i - 1))) {
                continue;
            }
            ProtocolState n = s.copy();
            Write w = n.orphans.remove(i);
            Result r = server.execute(n, w, -1);
            out.add(new Step<>(() -> "orphan " + w + " arrives -> " + r, n.normalize()));
        }
        out.add(new Step<>(() -> "tick", tick(s)));
        return out;
    }

    /**
     * The write reaches the server and runs there atomically; then either the reply reaches the
     * coordinator, or the acknowledgement is lost and the coordinator, unchanged, will send the
     * same write again (the Retrier).
     */
    private void send(ProtocolState s, int p, Coordinator c, Write w, List<Step<ProtocolState>> out) {
        ProtocolState n = s.copy();
        Result r = server.execute(n, w, p);
        n.co[p] = processes.reply(c, w, r, n);
        out.add(new Step<>(() -> "P" + p + " sends " + w + " -> " + r, n.normalize()));
        ProtocolState lost = s.copy();
        Result r2 = server.execute(lost, w, p);
        out.add(new Step<>(() -> "P" + p + " sends " + w + " -> " + r2 + ", ack lost (will retry)", lost.normalize()));
    }

    private ProtocolState tick(ProtocolState s) {
        ProtocolState n = s.copy();
        n.docAge = Math.min(maxAge, n.docAge + 1);
        for (int i = 0; i < n.co.length; i++) {
            Coordinator c = n.co[i];
            if (c.owner()) {
                c = c.withLeft(Math.max(minLeft, c.left() - 1));
            }
            if (c.hand() != null && c.hand().participant()) {
                c = c.withHand(c.hand().withLeft(Math.max(minLeft, c.hand().left() - 1)));
            }
            n.co[i] = c;
        }
        n.orphans.replaceAll(w -> w.participant() ? w.withLeft(Math.max(minLeft, w.left() - 1)) : w);
        return n.normalize();
    }

    // ---- invariants and the liveness target -----------------------------------------------------

    @Override
    public String violation(ProtocolState s) {
        return invariants.violation(s);
    }

    @Override
    public String transitionViolation(ProtocolState from, ProtocolState to) {
        return invariants.transitionViolation(from, to);
    }

    /** A finished system: nothing left to do, the transaction terminal. */
    @Override
    public boolean finished(ProtocolState s) {
        return s.quiescent() && s.doc.isTerminal();
    }

    @Override
    public String key(ProtocolState s) {
        return s.key();
    }
}
