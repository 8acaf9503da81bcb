package io.mongo2pc.model;

import io.mongo2pc.TransactionState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.mongo2pc.model.ProtocolModel.ACCOUNT;
import static io.mongo2pc.model.ProtocolModel.OPS;

/**
 * One state of {@link ProtocolModel}: the transaction document, the accounts (balance and the
 * marker of our transaction), the coordinator processes with the write each holds in hand, the
 * writes of crashed coordinators still on the wire, and ghost variables that only the invariants
 * read. Mutable while a successor is built, then normalized and never changed again.
 */
final class ProtocolState {

    /** The owner id of a process incarnation that has crashed. */
    static final int CRASHED_OWNER = 2;

    // ---- processes and writes ----------------------------------------------------------------

    /** The kinds of write a coordinator sends (each one atomic single-document write). */
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

    // ---- the documents, the processes, the wire, the ghosts ----------------------------------

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

    ProtocolState copy() {
        ProtocolState s = new ProtocolState();
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
    ProtocolState normalize() {
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
