package io.mongo2pc.model;

import io.mongo2pc.TransactionState;

import java.util.ArrayList;
import java.util.Arrays;
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
 */
final class ProtocolModel implements Model<ProtocolModel.State> {

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

    // ---- state ---------------------------------------------------------------------------------

    enum Kind { CLAIM, CANCEL_QUEUED, TAKEOVER, MOVE, RENEW, APPLY, UNDO, RELEASE }

    /**
     * A write already computed by a coordinator: what it will send, with the epoch and deadline it
     * had when it computed it. {@code left} = deadline - now (participant writes only);
     * {@code touched}: the transaction document was written since a takeover's read (so its
     * {@code lastModified <= staleBefore} can no longer hold).
     */
    record Write(Kind kind, int epoch, TransactionState from, TransactionState to, int op, int left, boolean touched, boolean cancel)
            implements Comparable<Write> {
        static Write claim() { return new Write(Kind.CLAIM, 0, null, null, -1, 0, false, false); }
        static Write cancelQueued() { return new Write(Kind.CANCEL_QUEUED, 0, null, null, -1, 0, false, false); }
        static Write takeover(TransactionState seen, int seenEpoch, boolean cancel) { return new Write(Kind.TAKEOVER, seenEpoch, seen, null, -1, 0, false, cancel); }
        static Write move(int epoch, TransactionState from, TransactionState to) { return new Write(Kind.MOVE, epoch, from, to, -1, 0, false, false); }
        static Write renew(int epoch, TransactionState state) { return new Write(Kind.RENEW, epoch, state, null, -1, 0, false, false); }
        static Write participant(Kind kind, int op, int left) { return new Write(kind, 0, null, null, op, left, false, false); }

        boolean hasEpoch() {
            return kind == Kind.TAKEOVER || kind == Kind.MOVE || kind == Kind.RENEW;
        }

        boolean participant() {
            return kind == Kind.APPLY || kind == Kind.UNDO || kind == Kind.RELEASE;
        }

        Write withEpoch(int e) { return new Write(kind, e, from, to, op, left, touched, cancel); }
        Write withLeft(int l) { return new Write(kind, epoch, from, to, op, l, touched, cancel); }
        Write touch() { return kind == Kind.TAKEOVER ? new Write(kind, epoch, from, to, op, left, true, cancel) : this; }

        /** A compact, injective code (for state keys and the canonical order of orphans). */
        int code() {
            return kind.ordinal() | epoch << 3 | (from == null ? 7 : from.ordinal()) << 8 | (to == null ? 7 : to.ordinal()) << 11
                    | (op + 1) << 14 | (left + 8) << 16 | (touched ? 1 : 0) << 20 | (cancel ? 1 : 0) << 21;
        }

        @Override
        public int compareTo(Write o) {
            return Integer.compare(code(), o.code());
        }

        @Override
        public String toString() {
            return switch (kind) {
                case CLAIM -> "claim(initial->pending)";
                case CANCEL_QUEUED -> "cancelQueued(initial->canceled)";
                case TAKEOVER -> "takeOver(" + from.stored() + ",e" + epoch + (cancel ? ",cancel" : "") + (touched ? ",renewed-since-read" : "") + ")";
                case MOVE -> "move(" + from.stored() + "->" + to.stored() + ",e" + epoch + ")";
                case RENEW -> "renew(" + from.stored() + ",e" + epoch + ")";
                case APPLY, UNDO, RELEASE -> kind.name().toLowerCase(java.util.Locale.ROOT) + "(" + ACCOUNT[op] + ",deadline "
                        + ("now" + (left >= 0 ? "+" : "") + left) + ")";
            };
        }
    }

    /**
     * A coordinator process: idle (no transaction, no memory: a recovery worker) or the owner of the
     * transaction under {@code epoch} (OwnedTransaction). {@code pc}: the next operation of the current
     * phase (applies forward, releases forward, undos backward), {@code OPS} = the state move is next.
     */
    record Coordinator(boolean owner, int epoch, TransactionState state, int pc, int left, boolean cancel, boolean mustRenew, Write hand) {
        static final Coordinator IDLE = new Coordinator(false, 0, null, 0, 0, false, false, null);

        static Coordinator owning(int epoch, TransactionState state, boolean cancel, int left) {
            return new Coordinator(true, epoch, state, 0, left, cancel, false, null);
        }

        int code() {
            return (owner ? 1 : 0) | epoch << 1 | (state == null ? 7 : state.ordinal()) << 6 | pc << 9 | (left + 8) << 11
                    | (cancel ? 1 : 0) << 15 | (mustRenew ? 1 : 0) << 16;
        }

        Coordinator withHand(Write w) { return new Coordinator(owner, epoch, state, pc, left, cancel, mustRenew, w); }
        Coordinator withEpoch(int e) { return new Coordinator(owner, e, state, pc, left, cancel, mustRenew, hand); }
        Coordinator withLeft(int l) { return new Coordinator(owner, epoch, state, pc, l, cancel, mustRenew, hand); }
        Coordinator next() { return new Coordinator(owner, epoch, state, pc + 1, left, cancel, mustRenew, null); }
        Coordinator renewed(int l) { return new Coordinator(owner, epoch, state, pc, l, cancel, false, null); }
        Coordinator expired() { return new Coordinator(owner, epoch, state, pc, left, cancel, true, null); }
        Coordinator refused() { return new Coordinator(owner, epoch, state, pc, left, true, mustRenew, null); }

        @Override
        public String toString() {
            String h = hand == null ? "" : " hand=" + hand;
            if (!owner) {
                return "idle" + h;
            }
            return "owner(e" + epoch + "," + state.stored() + ",pc" + pc + ",deadline " + ("now" + (left >= 0 ? "+" : "") + left)
                    + (cancel ? ",cancel" : "") + (mustRenew ? ",mustRenew" : "") + ")" + h;
        }
    }

    /** One state of the whole system: the documents, the processes, the network, and ghost variables. */
    static final class State {
        // transactions collection: the one transaction document
        TransactionState doc = TransactionState.INITIAL;
        int docEpoch;
        int docAge;
        int docOwner = -1;
        // accounts collection: balance and the marker of our transaction in pendingTransactions
        int[] balance = new int[OPS];
        boolean[] marker = new boolean[OPS];
        // ghost: how many times each operation is in effect (+1 per effective apply, -1 per effective undo)
        int[] effect = new int[OPS];
        // ghost history
        boolean everCommitted;
        boolean everCanceled;
        int crashesLeft;
        Coordinator[] co = {Coordinator.IDLE, Coordinator.IDLE};
        /** Writes sent by a coordinator that crashed since: still deliverable. Sorted (a multiset). */
        List<Write> orphans = new ArrayList<>();

        State copy() {
            State s = new State();
            s.doc = doc;
            s.docEpoch = docEpoch;
            s.docAge = docAge;
            s.docOwner = docOwner;
            s.balance = balance.clone();
            s.marker = marker.clone();
            s.effect = effect.clone();
            s.everCommitted = everCommitted;
            s.everCanceled = everCanceled;
            s.crashesLeft = crashesLeft;
            s.co = co.clone();
            s.orphans = new ArrayList<>(orphans);
            return s;
        }

        boolean quiescent() {
            return orphans.isEmpty() && Arrays.stream(co).allMatch(c -> !c.owner && c.hand == null);
        }

        /**
         * Canonical form: orphans sorted; epochs renumbered keeping order, equality and the
         * successor relation (takeover writes seen + 1) of every epoch still referenced.
         */
        State normalize() {
            int[] used = new int[16];
            int n = 0;
            used[n++] = docEpoch;
            for (Coordinator c : co) {
                if (c.owner) {
                    used[n++] = c.epoch;
                }
                if (c.hand != null && c.hand.hasEpoch()) {
                    used[n++] = c.hand.epoch;
                }
            }
            for (Write w : orphans) {
                if (w.hasEpoch()) {
                    used[n++] = w.epoch;
                }
            }
            java.util.function.IntUnaryOperator map = Epochs.canonical(used, n);
            docEpoch = map.applyAsInt(docEpoch);
            for (int i = 0; i < co.length; i++) {
                Coordinator c = co[i];
                if (c.owner) {
                    c = c.withEpoch(map.applyAsInt(c.epoch));
                }
                if (c.hand != null && c.hand.hasEpoch()) {
                    c = c.withHand(c.hand.withEpoch(map.applyAsInt(c.hand.epoch)));
                }
                co[i] = c;
            }
            if (!orphans.isEmpty()) {
                orphans.replaceAll(w -> w.hasEpoch() ? w.withEpoch(map.applyAsInt(w.epoch)) : w);
                orphans.sort(null);
            }
            return this;
        }

        /** Compact and injective: the visited set's key. */
        String key() {
            StringBuilder b = new StringBuilder(24);
            b.append((char) doc.ordinal()).append((char) docEpoch).append((char) docAge).append((char) (docOwner + 1));
            for (int i = 0; i < OPS; i++) {
                b.append((char) (balance[i] + 16)).append(marker[i] ? '1' : '0').append((char) (effect[i] + 16));
            }
            b.append(everCommitted ? 'c' : '-').append(everCanceled ? 'x' : '-').append((char) crashesLeft);
            for (Coordinator c : co) {
                b.append((char) (c.code() & 0xFFFF)).append((char) (c.code() >>> 16));
                appendWrite(b, c.hand);
            }
            for (Write w : orphans) {
                appendWrite(b, w);
            }
            return b.toString();
        }

        private static void appendWrite(StringBuilder b, Write w) {
            int code = w == null ? 0 : w.code() + 1;
            b.append((char) (code & 0xFFFF)).append((char) (code >>> 16));
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            b.append("tx{state=").append(doc.stored()).append(",epoch=e").append(docEpoch).append(",age=").append(docAge)
                    .append(",owner=").append(docOwner < 0 ? "-" : docOwner == CRASHED_OWNER ? "crashed" : "P" + docOwner).append("}");
            for (int i = 0; i < OPS; i++) {
                b.append(' ').append(ACCOUNT[i]).append("{balance=").append(balance[i]).append(marker[i] ? ",marker" : "")
                        .append(",inEffect=").append(effect[i]).append('}');
            }
            for (int i = 0; i < co.length; i++) {
                b.append(" P").append(i).append('=').append(co[i]);
            }
            if (!orphans.isEmpty()) {
                b.append(" orphans=").append(orphans);
            }
            return b.toString();
        }
    }

    @Override
    public List<State> initialStates() {
        State s = new State();
        s.balance = initialBalances.clone();
        s.crashesLeft = crashes;
        return List.of(s.normalize());
    }

    // ---- transitions ---------------------------------------------------------------------------

    @Override
    public List<Step<State>> successors(State s) {
        List<Step<State>> out = new ArrayList<>();
        for (int proc = 0; proc < s.co.length; proc++) {
            final int p = proc;
            Coordinator c = s.co[p];
            if (c.hand == null) {
                for (Write w : prepare(s, c)) {
                    if (explicitHands || w.kind == Kind.TAKEOVER) {
                        State n = s.copy();
                        n.co[p] = c.withHand(w);
                        out.add(new Step<>(() -> "P" + p + " prepares " + w, n.normalize()));
                    } else {
                        send(s, p, c, w, out);
                    }
                }
            } else {
                send(s, p, c, c.hand, out);
            }
            if (s.crashesLeft > 0 && (c.owner || c.hand != null)) {
                // Crash and restart with no memory. A write in hand is already on the wire; without
                // explicit hands, an owner's write in hand is any write it could send next.
                List<Write> onTheWire = new ArrayList<>();
                onTheWire.add(null);
                if (c.hand != null) {
                    onTheWire.add(c.hand);
                } else if (!explicitHands) {
                    onTheWire.addAll(prepare(s, c));
                }
                for (Write w : onTheWire) {
                    if (w == null && c.hand != null) {
                        continue;
                    }
                    State n = s.copy();
                    n.crashesLeft--;
                    if (w != null) {
                        n.orphans.add(w);
                    }
                    n.co[p] = Coordinator.IDLE;
                    if (n.docOwner == p) {
                        n.docOwner = CRASHED_OWNER; // the restarted process is a new incarnation, with a new owner id
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
            State n = s.copy();
            Write w = n.orphans.remove(i);
            Result r = execute(n, w, -1);
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
    private void send(State s, int p, Coordinator c, Write w, List<Step<State>> out) {
        State n = s.copy();
        Result r = execute(n, w, p);
        n.co[p] = reply(c, w, r, n);
        out.add(new Step<>(() -> "P" + p + " sends " + w + " -> " + r, n.normalize()));
        State lost = s.copy();
        Result r2 = execute(lost, w, p);
        out.add(new Step<>(() -> "P" + p + " sends " + w + " -> " + r2 + ", ack lost (will retry)", lost.normalize()));
    }

    private State tick(State s) {
        State n = s.copy();
        n.docAge = Math.min(maxAge, n.docAge + 1);
        for (int i = 0; i < n.co.length; i++) {
            Coordinator c = n.co[i];
            if (c.owner) {
                c = c.withLeft(Math.max(minLeft, c.left - 1));
            }
            if (c.hand != null && c.hand.participant()) {
                c = c.withHand(c.hand.withLeft(Math.max(minLeft, c.hand.left - 1)));
            }
            n.co[i] = c;
        }
        n.orphans.replaceAll(w -> w.participant() ? w.withLeft(Math.max(minLeft, w.left - 1)) : w);
        return n.normalize();
    }

    /** The writes a coordinator with nothing in hand may compute next (Starter, Recovery, Cancellation). */
    private List<Write> prepare(State s, Coordinator c) {
        List<Write> ws = new ArrayList<>();
        if (!c.owner) {
            // Starter.claimAndRun / Cancellation.cancel of a queued transaction.
            if (s.doc == TransactionState.INITIAL) {
                ws.add(Write.claim());
                ws.add(Write.cancelQueued());
            }
            // Recovery.recover / Cancellation.cancel: the stale query, then store.takeOver(seen, staleBefore).
            int wait = has(Bug.TAKEOVER_IGNORES_LEASE) ? OLDER_THAN : lease;
            boolean recoverable = s.doc == TransactionState.PENDING || s.doc == TransactionState.CANCELING
                    || (s.doc == TransactionState.APPLIED && !has(Bug.RECOVERY_SKIPS_APPLIED));
            if (recoverable && s.docAge >= wait) {
                ws.add(Write.takeover(s.doc, s.docEpoch, false));
                if (s.doc == TransactionState.PENDING) {
                    ws.add(Write.takeover(s.doc, s.docEpoch, true));
                }
            }
            return ws;
        }
        if (c.mustRenew) {
            // participantWrite: EXPIRED -> renew(tx)
            ws.add(Write.renew(c.epoch, c.state));
            return ws;
        }
        switch (c.state) {
            case PENDING -> {
                if (c.cancel) {
                    ws.add(Write.move(c.epoch, TransactionState.PENDING, TransactionState.CANCELING));
                } else if (c.pc < OPS) {
                    ws.add(Write.participant(Kind.APPLY, c.pc, c.left));
                    ws.add(Write.renew(c.epoch, c.state)); // renewIfDue
                } else {
                    ws.add(Write.move(c.epoch, TransactionState.PENDING, TransactionState.APPLIED));
                }
            }
            case APPLIED -> {
                if (c.pc < OPS) {
                    ws.add(Write.participant(Kind.RELEASE, c.pc, c.left));
                    ws.add(Write.renew(c.epoch, c.state));
                } else {
                    ws.add(Write.move(c.epoch, TransactionState.APPLIED, TransactionState.DONE));
                }
            }
            case CANCELING -> {
                if (c.pc < OPS) {
                    ws.add(Write.participant(Kind.UNDO, OPS - 1 - c.pc, c.left));
                    ws.add(Write.renew(c.epoch, c.state));
                } else {
                    ws.add(Write.move(c.epoch, TransactionState.CANCELING, TransactionState.CANCELED));
                }
            }
            default -> throw new IllegalStateException("owner in " + c.state);
        }
        return ws;
    }

    /** The owner id of a process incarnation that has crashed. */
    static final int CRASHED_OWNER = 2;

    enum Result { OK, LOST, DONE, EXPIRED, REFUSED, /** only with MOVE_RETRY_ASSUMES_SUCCESS: no stamp */ ASSUMED }

    /**
     * The server runs one write atomically, at the current time. {@code sender} < 0: an orphan,
     * nobody hears the reply; a document it claims names {@link #CRASHED_OWNER} (owner ids are
     * per incarnation).
     */
    private Result execute(State s, Write w, int sender) {
        return switch (w.kind) {
            case CLAIM -> claim(s, sender);
            case CANCEL_QUEUED -> {
                if (s.doc == TransactionState.INITIAL) {
                    setState(s, TransactionState.CANCELED);
                    touchDoc(s);
                    yield Result.OK;
                }
                yield Result.LOST;
            }
            case TAKEOVER -> takeOver(s, w, sender);
            case MOVE -> move(s, w);
            case RENEW -> renew(s, w);
            case APPLY -> apply(s, w);
            case UNDO -> markerWrite(s, w, true);
            case RELEASE -> markerWrite(s, w, false);
        };
    }

    /** TransactionStore.claim: one findAndModify on state initial. */
    private Result claim(State s, int sender) {
        if (s.doc != TransactionState.INITIAL) {
            return Result.LOST;
        }
        setState(s, TransactionState.PENDING);
        s.docEpoch++;
        s.docOwner = sender < 0 ? CRASHED_OWNER : sender;
        touchDoc(s);
        return Result.OK;
    }

    /** TransactionStore.takeOver: CAS on state, epoch and lastModified <= staleBefore; epoch + 1, new owner. */
    private Result takeOver(State s, Write w, int sender) {
        boolean stillStale = !w.touched || has(Bug.TAKEOVER_WITHOUT_STALENESS_RECHECK);
        if (s.doc == w.from && s.docEpoch == w.epoch && stillStale) {
            s.docEpoch = has(Bug.TAKEOVER_WITHOUT_EPOCH_BUMP) ? w.epoch : w.epoch + 1;
            s.docOwner = sender < 0 ? CRASHED_OWNER : sender;
            touchDoc(s);
            return Result.OK;
        }
        // TakeOverAndDrive: our own takeover whose acknowledgement was lost.
        int expected = has(Bug.TAKEOVER_WITHOUT_EPOCH_BUMP) ? w.epoch : w.epoch + 1;
        if (sender >= 0 && s.docOwner == sender && s.docEpoch == expected) {
            return Result.OK;
        }
        return Result.LOST;
    }

    /** TransactionStore.move: CAS on state and epoch; OwnerWrites.move: a miss may be our own write with its ack lost. */
    private Result move(State s, Write w) {
        boolean epochOk = s.docEpoch == w.epoch || has(Bug.NO_EPOCH_IN_CAS);
        if (s.doc == w.from && epochOk) {
            setState(s, w.to);
            touchDoc(s);
            return Result.OK;
        }
        if (s.doc == w.to && (s.docEpoch == w.epoch || has(Bug.NO_EPOCH_IN_CAS) || has(Bug.ACK_LOST_CHECK_WITHOUT_EPOCH))) {
            return Result.OK; // OwnerWrites.move: ackLost, the stored stamp becomes ours
        }
        return has(Bug.MOVE_RETRY_ASSUMES_SUCCESS) ? Result.ASSUMED : Result.LOST;
    }

    /** TransactionStore.renew: CAS on state and epoch, stamps lastModified. */
    private Result renew(State s, Write w) {
        boolean epochOk = s.docEpoch == w.epoch || has(Bug.NO_EPOCH_IN_CAS);
        if (s.doc == w.from && epochOk) {
            touchDoc(s);
            return Result.OK;
        }
        return Result.LOST;
    }

    /**
     * OwnerWrites.stamped: the deadline is the stored lastModified (returned by the write, or read back
     * after a lost acknowledgement) plus the lease, less the skew; kept as its distance from now.
     */
    int deadline(State doc) {
        int margin = has(Bug.NO_SKEW_MARGIN) ? 0 : skew;
        return Math.max(minLeft, lease - margin - doc.docAge);
    }

    /** Participants.fenced: {$expr: {$lt: ["$$NOW", deadline]}}, $$NOW on the participants' server clock. */
    private boolean beforeDeadline(Write w) {
        if (has(Bug.NO_DEADLINE_CHECK)) {
            return true;
        }
        int left = w.left + behind;
        return has(Bug.DEADLINE_OFF_BY_ONE) ? left >= 0 : left > 0;
    }

    /** IncrementWrites.apply: _id, marker absent, guard, $$NOW < deadline -> $inc and $push marker; else Refusals.whyNotApplied. */
    private Result apply(State s, Write w) {
        int op = w.op;
        boolean markerAbsent = !s.marker[op] || has(Bug.APPLY_WITHOUT_MARKER_GUARD);
        boolean guard = s.balance[op] + DELTA[op] >= 0 || DELTA[op] > 0;
        if (markerAbsent && guard && beforeDeadline(w)) {
            s.balance[op] += DELTA[op];
            s.marker[op] = true;
            s.effect[op]++;
            return Result.DONE;
        }
        if (s.marker[op]) {
            return Result.DONE; // applied before
        }
        if (!beforeDeadline(w)) {
            return Result.EXPIRED;
        }
        return Result.REFUSED;
    }

    /** IncrementWrites.undo (inverse $inc + $pull) and IncrementWrites.release ($pull): marker present, $$NOW < deadline. */
    private Result markerWrite(State s, Write w, boolean undo) {
        int op = w.op;
        boolean markerOk = s.marker[op] || (undo && has(Bug.UNDO_WITHOUT_MARKER_CHECK));
        if (markerOk && beforeDeadline(w)) {
            if (undo) {
                s.balance[op] -= DELTA[op];
                s.effect[op]--;
            }
            s.marker[op] = false;
            return Result.DONE;
        }
        return s.marker[op] ? Result.EXPIRED : Result.DONE;
    }

    private static void setState(State s, TransactionState to) {
        if (to == TransactionState.APPLIED || to == TransactionState.DONE) {
            s.everCommitted = true;
        }
        if (to == TransactionState.CANCELED) {
            s.everCanceled = true;
        }
        s.doc = to;
    }

    /** Every write to the transaction document stamps lastModified with $currentDate. */
    private static void touchDoc(State s) {
        s.docAge = 0;
        for (int i = 0; i < s.co.length; i++) {
            Coordinator c = s.co[i];
            if (c.hand != null) {
                s.co[i] = c.withHand(c.hand.touch());
            }
        }
        s.orphans.replaceAll(Write::touch);
    }

    /** What the coordinator does with the reply (Coordinator.drive, OwnerWrites.participantWrite / move / renew). */
    private Coordinator reply(Coordinator c, Write w, Result r, State after) {
        return switch (w.kind) {
            // the claim and the takeover return the document: its epoch is now the owner's
            case CLAIM -> r == Result.OK ? Coordinator.owning(after.docEpoch, TransactionState.PENDING, false, deadline(after)) : Coordinator.IDLE;
            case CANCEL_QUEUED -> Coordinator.IDLE;
            case TAKEOVER -> r == Result.OK
                    ? Coordinator.owning(after.docEpoch, w.from, w.cancel && w.from == TransactionState.PENDING, deadline(after)) : Coordinator.IDLE;
            case MOVE -> {
                if (r == Result.ASSUMED) {
                    yield w.to.isTerminal() ? Coordinator.IDLE
                            : new Coordinator(true, c.epoch, w.to, 0, c.left, false, false, null); // no new stamp
                }
                if (r != Result.OK) {
                    yield Coordinator.IDLE; // LeaseLostException
                }
                yield w.to.isTerminal() ? Coordinator.IDLE : Coordinator.owning(c.epoch, w.to, false, deadline(after));
            }
            case RENEW -> r == Result.OK ? c.renewed(deadline(after)) : Coordinator.IDLE;
            case APPLY, UNDO, RELEASE -> switch (r) {
                case DONE -> c.next();
                case EXPIRED -> c.expired();
                case REFUSED -> c.refused();
                default -> throw new IllegalStateException(r.toString());
            };
        };
    }

    // ---- invariants ----------------------------------------------------------------------------

    /** Null if {@code s} satisfies every invariant, else what is violated. */
    @Override
    public String violation(State s) {
        for (int i = 0; i < OPS; i++) {
            if (s.balance[i] < 0) {
                return "overdraft: " + ACCOUNT[i] + " has balance " + s.balance[i];
            }
            if (s.effect[i] < 0 || s.effect[i] > 1) {
                return "operation on " + ACCOUNT[i] + " is in effect " + s.effect[i] + " times";
            }
            if (s.marker[i] && s.effect[i] != 1) {
                return "marker on " + ACCOUNT[i] + " but its operation is not in effect";
            }
        }
        if (s.everCommitted && (s.effect[0] != 1 || s.effect[1] != 1)) {
            return "committed (applied/done reached) but operations in effect " + Arrays.toString(s.effect);
        }
        if (s.everCanceled && (s.effect[0] != 0 || s.effect[1] != 0)) {
            return "canceled but operations in effect " + Arrays.toString(s.effect);
        }
        if (s.everCommitted && s.everCanceled) {
            return "both committed and canceled";
        }
        if (finished(s)) {
            // Atomicity, once nothing is in flight: done with both in effect once, or canceled with none.
            int expected = s.doc == TransactionState.DONE ? 1 : 0;
            if (s.effect[0] != expected || s.effect[1] != expected) {
                return "finished " + s.doc.stored() + " with operations in effect " + Arrays.toString(s.effect);
            }
            if (s.balance[0] + s.balance[1] != initialBalances[0] + initialBalances[1]) {
                return "finished " + s.doc.stored() + " and money not conserved: " + Arrays.toString(s.balance);
            }
            if (s.marker[0] || s.marker[1]) {
                return "finished " + s.doc.stored() + " with markers left";
            }
        }
        return null;
    }

    /** Null if the step from {@code s} to {@code n} is allowed. */
    @Override
    public String transitionViolation(State s, State n) {
        if (n.doc != s.doc && !s.doc.canMoveTo(n.doc)) {
            return "state moved " + s.doc.stored() + " -> " + n.doc.stored();
        }
        return null;
    }

    /** A finished system: nothing left to do, the transaction terminal. */
    @Override
    public boolean finished(State s) {
        return s.quiescent() && s.doc.isTerminal();
    }

    @Override
    public String key(State s) {
        return s.key();
    }
}
