package io.mongo2pc.model;

import io.mongo2pc.TransactionState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One state of {@link TwoRoundModel}: the transaction documents, the accounts (balance and the
 * marker of each operation, which stands for the marker and its entry: one write adds or removes
 * both), the processes, the writes on the wire, and ghost variables that only the invariants read.
 * Mutable while a successor is built, then normalized and never changed again.
 */
final class TwoRoundState {

    // ---- processes and writes ----------------------------------------------------------------

    /** The kinds of write a process sends (see docs/TWO-ROUND.md). */
    enum Kind {
        /** The transaction document's insert-if-absent (round 1, beside the prepares). */
        INSERT,
        /** Hold (guarded decrease) or mark (increase), fenced by the owner's deadline. */
        PREPARE,
        /** The owner's undo while canceling: marker present, fenced by its deadline. */
        UNDO,
        /** An undo by the rules of a resolver (tombstoned transaction): marker present, no deadline. */
        RESOLVER_UNDO,
        /** Roll-forward: marker present, applies what waits for the commit point, pulls the marker; no deadline. */
        RELEASE,
        /** A state change: compare-and-set on state and epoch. */
        MOVE,
        /** The owner's lease renewed: compare-and-set on state and epoch, new stamp. */
        RENEW,
        /** Recovery's takeover: compare-and-set on state, epoch and staleness; epoch + 1. */
        TAKEOVER,
        /**
         * Round 1b of an exclusive update: its lock of this transaction there, no before-image yet,
         * fenced by the owner's deadline -> the change applied and the before-image stored, one write.
         */
        CHANGE,
        /**
         * The commit-insert variant (docs/COMMIT-INSERT.md): the transaction document's first write,
         * an insert-if-absent of the document already {@code applied}, stamped {@code insertedAt}.
         */
        COMMIT_INSERT
    }

    /**
     * A write on its way to the server. {@code proc} is the process waiting for its answer, or -1
     * for an orphan (its sender crashed, stopped waiting, or gave up on it: nobody hears the answer).
     * {@code left} = deadline - now on the coordinator's clock, for fenced writes (0 otherwise).
     * {@code touched}: the transaction document was written after a takeover's read.
     */
    record Msg(Kind kind, int tx, int op, int left, int epoch, TransactionState from, TransactionState to,
               int proc, boolean touched, boolean cancel) implements Comparable<Msg> {

        boolean hasEpoch() {
            return kind == Kind.MOVE || kind == Kind.RENEW || kind == Kind.TAKEOVER;
        }

        boolean fenced() {
            return kind == Kind.INSERT || kind == Kind.PREPARE || kind == Kind.UNDO || kind == Kind.CHANGE || kind == Kind.COMMIT_INSERT;
        }

        Msg orphan() { return withProc(-1); }
        Msg withProc(int p) { return new Msg(kind, tx, op, left, epoch, from, to, p, touched, cancel); }
        Msg withEpoch(int e) { return new Msg(kind, tx, op, left, e, from, to, proc, touched, cancel); }
        Msg withLeft(int l) { return new Msg(kind, tx, op, l, epoch, from, to, proc, touched, cancel); }
        Msg touch() { return new Msg(kind, tx, op, left, epoch, from, to, proc, true, cancel); }

        long code() {
            return kind.ordinal() | (long) tx << 4 | (long) (op + 1) << 6 | (long) (left + 8) << 9 | (long) epoch << 13
                    | (long) (from == null ? 7 : from.ordinal()) << 18 | (long) (to == null ? 7 : to.ordinal()) << 21
                    | (long) (proc + 1) << 24 | (touched ? 1L : 0L) << 28 | (cancel ? 1L : 0L) << 29;
        }

        @Override
        public int compareTo(Msg o) {
            return Long.compare(code(), o.code());
        }

        @Override
        public String toString() {
            String t = "T" + (tx + 1);
            String a = op >= 0 ? TwoRoundModel.ACCOUNT[TwoRoundModel.ACC[tx][op]] : "";
            String d = ",deadline now" + (left >= 0 ? "+" : "") + left;
            String body = switch (kind) {
                case INSERT -> "insert(" + t + d + ")";
                case COMMIT_INSERT -> "commitInsert(" + t + ",applied" + d + ")";
                case PREPARE -> (TwoRoundModel.DELTA[tx][op] < 0 ? "hold(" : "mark(") + t + "@" + a + d + ")";
                case CHANGE -> "change(" + t + "@" + a + d + ")";
                case UNDO -> "undo(" + t + "@" + a + d + ")";
                case RESOLVER_UNDO -> "resolverUndo(" + t + "@" + a + ")";
                case RELEASE -> "release(" + t + "@" + a + ")";
                case MOVE -> "move(" + t + "," + from.stored() + "->" + to.stored() + ",e" + epoch + ")";
                case RENEW -> "renew(" + t + "," + from.stored() + ",e" + epoch + ")";
                case TAKEOVER -> "takeOver(" + t + "," + from.stored() + ",e" + epoch + (cancel ? ",cancel" : "")
                        + (touched ? ",renewed-since-read" : "") + ")";
            };
            return body + (proc >= 0 ? "" : "[orphan]");
        }
    }

    /** What a process knows of one write it sent: the status of a slot. */
    static final int NONE = 0, WIRE = 1, DONE = 2, REFUSED = 3, EXPIRED = 4, DOUBT = 5, RESEND = 6;
    /** An exclusive update's slot: taken (round 1), its change (round 1b) still to send; its change refused by the server. */
    static final int TAKEN = 7, REJECTED = 8;
    /** The insert's slot: NO_INSERT for an owner by takeover. */
    static final int NO_INSERT = 0, MINE = 2, TOMB = 3;
    /**
     * The commit-insert variant: no document yet (round 1 is the prepares alone); the commit insert
     * on the wire, its answer lost, and inserted (whether before the deadline is still to be known).
     */
    static final int NO_DOC = 4, COMMIT_WIRE = 6, COMMIT_DOUBT = 7, COMMIT_MINE = 8;
    /** The same after an earlier copy was in doubt (it may have committed, finished and been pruned since). */
    static final int COMMIT_AGAIN_WIRE = 9, COMMIT_AGAIN_MINE = 10;
    private static final String[] SLOT = {"-", "wire", "done", "refused", "expired", "doubt", "resend", "taken", "change refused"};
    private static final String[] INS = {"-", "wire", "mine", "tombstone", "none yet", "doubt", "commit on the wire",
        "commit in doubt", "commit inserted", "commit sent again", "commit inserted after a copy in doubt"};

    /** What an owner is doing in its current state. */
    enum Phase { PREPARE, UNDO, RESOLVER_UNDO, RELEASE }

    /**
     * A process. Idle ({@code tx < 0}): a recovery worker, a reader or a writer of other
     * transactions, with at most a takeover read in {@code hand}; {@code start >= 0}: it will run
     * that transaction (round 1). Owner: of {@code tx} under {@code epoch}, with its deadline
     * distance {@code left}; {@code slots} packs a slot status (3 bits) per operation;
     * {@code move} is the state change or renewal it waits for.
     */
    record Proc(int start, int tx, int epoch, TransactionState state, Phase phase, int left, int ins, int slots,
                boolean cancel, Msg move, boolean moveDoubt, Msg hand) {
        static final Proc IDLE = new Proc(-1, -1, 0, null, null, 0, NO_INSERT, 0, false, null, false, null);

        static Proc starting(int tx) {
            return new Proc(tx, -1, 0, null, null, 0, NO_INSERT, 0, false, null, false, null);
        }

        static Proc owning(int tx, int epoch, TransactionState state, int left, int ins, int slots, boolean cancel) {
            Phase phase = switch (state) {
                case PENDING -> Phase.PREPARE;
                case APPLIED -> Phase.RELEASE;
                case CANCELING -> Phase.UNDO;
                default -> throw new IllegalStateException("owner in " + state);
            };
            return new Proc(-1, tx, epoch, state, phase, left, ins, slots, cancel, null, false, null);
        }

        boolean owner() {
            return tx >= 0;
        }

        int slot(int op) {
            return slots >> (4 * op) & 15;
        }

        Proc withSlot(int op, int status) {
            return withSlots(slots & ~(15 << (4 * op)) | status << (4 * op));
        }

        boolean anySlot(int status) {
            for (int i = 0; i < TwoRoundModel.OPS; i++) {
                if (slot(i) == status) {
                    return true;
                }
            }
            return false;
        }

        boolean allSlots(int status) {
            for (int i = 0; i < TwoRoundModel.OPS; i++) {
                if (slot(i) != status) {
                    return false;
                }
            }
            return true;
        }

        Proc withSlots(int s) { return new Proc(start, tx, epoch, state, phase, left, ins, s, cancel, move, moveDoubt, hand); }
        Proc withIns(int i) { return new Proc(start, tx, epoch, state, phase, left, i, slots, cancel, move, moveDoubt, hand); }
        Proc withLeft(int l) { return new Proc(start, tx, epoch, state, phase, l, ins, slots, cancel, move, moveDoubt, hand); }
        Proc withEpoch(int e) { return new Proc(start, tx, e, state, phase, left, ins, slots, cancel, move, moveDoubt, hand); }
        Proc withPhase(Phase p) { return new Proc(start, tx, epoch, state, p, left, ins, 0, cancel, move, moveDoubt, hand); }
        Proc withCancel() { return new Proc(start, tx, epoch, state, phase, left, ins, slots, true, move, moveDoubt, hand); }
        Proc withMove(Msg m, boolean doubt) { return new Proc(start, tx, epoch, state, phase, left, ins, slots, cancel, m, doubt, hand); }
        Proc withHand(Msg h) { return new Proc(start, tx, epoch, state, phase, left, ins, slots, cancel, move, moveDoubt, h); }

        void appendCode(StringBuilder b) {
            b.append((char) (start + 1)).append((char) (tx + 1)).append((char) epoch).append((char) (state == null ? 7 : state.ordinal()))
                    .append((char) (phase == null ? 7 : phase.ordinal())).append((char) (left + 8)).append((char) ins).append((char) slots)
                    .append(cancel ? 'c' : '-');
            if (move != null) {
                b.append(moveDoubt ? '?' : 'm');
                appendMsg(b, move);
            }
            if (hand != null) {
                b.append('h');
                appendMsg(b, hand);
            }
            b.append(';');
        }

        @Override
        public String toString() {
            if (!owner()) {
                return (start >= 0 ? "about to run T" + (start + 1) : "idle") + (hand == null ? "" : " hand=" + hand);
            }
            StringBuilder b = new StringBuilder("owner(T").append(tx + 1).append(",e").append(epoch).append(',')
                    .append(state.stored()).append(',').append(phase.name().toLowerCase(java.util.Locale.ROOT))
                    .append(",deadline now").append(left >= 0 ? "+" : "").append(left);
            if (ins != NO_INSERT) {
                b.append(",insert ").append(INS[ins]);
            }
            b.append(",ops[");
            for (int i = 0; i < TwoRoundModel.OPS; i++) {
                b.append(i > 0 ? " " : "").append(SLOT[slot(i)]);
            }
            b.append(']').append(cancel ? ",cancel" : "");
            if (move != null) {
                b.append(",waits for ").append(move).append(moveDoubt ? " (in doubt)" : "");
            }
            return b.append(')').toString();
        }
    }

    // ---- the stored documents and ghosts ---------------------------------------------------

    /** Per transaction: its document's state, or null while it has none. */
    TransactionState[] doc;
    /** Inserted as a tombstone by a resolver (canceled, no owner). */
    boolean[] tomb;
    /** Inserted at or after the deadline of its round 1 ({@code insertedAt >= until}). */
    boolean[] late;
    int[] epoch;
    int[] age;
    int[] owner;
    /** The deadline its round-1 entries carry ({@code until}), as a distance from now, while it has no document. */
    int[] until;
    int[] balance;
    /** [tx][op]: the operation's marker (and entry) is on its account; for an exclusive update, its lock. */
    boolean[][] marker;
    /** T1's exclusive update: the before-image its change (round 1b) stored in its lock, or NO_IMAGE. */
    int image = NO_IMAGE;
    static final int NO_IMAGE = -9;
    /** Ghost [tx][op]: how many times the operation's change is in the stored balance. */
    int[][] eff;
    /** Ghost: the transaction reached applied / canceled. */
    boolean[] committed;
    boolean[] canceled;
    /** Ghost: what the owner told its caller: 0 nothing yet, COMMITTED or CANCELED. */
    int[] told;
    static final int TOLD_COMMITTED = 1, TOLD_CANCELED = 2;
    /** Ghost: prune deleted the document at least once (a later one is a late copy's: its ghosts stay as decided). */
    boolean[] pruned;
    /** Ghost: the transaction that reached applied first (-1: none yet), for the committed value of an update. */
    int firstCommitted = -1;
    int crashesLeft;
    /** How many more writes may be delayed past their sender's timeout (each leaves an orphan on the wire). */
    int delaysLeft;
    Proc[] procs;
    /** The reader of readCommitted whose reads are apart (the model's {@code reader} switch), or null while idle. */
    TwoRoundReader.Read read;
    /** Writes sent and not yet run by the server. Sorted (a multiset). */
    List<Msg> wire = new ArrayList<>();

    static final int NO_OWNER = -1;
    static final int CRASHED = 9;

    TwoRoundState copy() {
        TwoRoundState s = new TwoRoundState();
        s.doc = doc.clone();
        s.tomb = tomb.clone();
        s.late = late.clone();
        s.epoch = epoch.clone();
        s.age = age.clone();
        s.owner = owner.clone();
        s.until = until.clone();
        s.balance = balance.clone();
        s.marker = new boolean[marker.length][];
        s.eff = new int[eff.length][];
        for (int t = 0; t < marker.length; t++) {
            s.marker[t] = marker[t].clone();
            s.eff[t] = eff[t].clone();
        }
        s.committed = committed.clone();
        s.canceled = canceled.clone();
        s.told = told.clone();
        s.pruned = pruned.clone();
        s.firstCommitted = firstCommitted;
        s.image = image;
        s.crashesLeft = crashesLeft;
        s.delaysLeft = delaysLeft;
        s.procs = procs.clone();
        s.read = read;
        s.wire = new ArrayList<>(wire);
        return s;
    }

    boolean anyMarker(int tx) {
        for (boolean m : marker[tx]) {
            if (m) {
                return true;
            }
        }
        return false;
    }

    /** Nothing in flight: every process idle with empty hands and nothing left to start, nothing on the wire. */
    boolean quiescent() {
        return wire.isEmpty() && Arrays.stream(procs).allMatch(p -> !p.owner() && p.start < 0 && p.hand == null);
    }

    String key() {
        StringBuilder b = new StringBuilder(256); // a key is about 150 characters: no regrowing
        for (int t = 0; t < doc.length; t++) {
            b.append((char) (doc[t] == null ? 7 : doc[t].ordinal())).append(tomb[t] ? 't' : '-').append(late[t] ? 'l' : '-')
                    .append((char) epoch[t]).append((char) age[t]).append((char) (owner[t] + 1)).append((char) (until[t] + 8))
                    .append(committed[t] ? 'c' : '-').append(canceled[t] ? 'x' : '-').append((char) ('0' + told[t]))
                    .append(pruned[t] ? 'p' : '-');
            for (int i = 0; i < marker[t].length; i++) {
                b.append(marker[t][i] ? '1' : '0').append((char) (eff[t][i] + 8));
            }
        }
        for (int v : balance) {
            b.append((char) (v + 16));
        }
        b.append((char) crashesLeft).append((char) delaysLeft).append((char) (firstCommitted + 1)).append((char) (image + 16));
        for (Proc p : procs) {
            p.appendCode(b);
        }
        for (Msg m : wire) {
            appendMsg(b, m);
        }
        if (read != null) {
            b.append('r').append(read.code());
        }
        return b.toString();
    }

    /** A write's 30-bit code as four characters below 256, so that keys stay one byte a character. */
    private static void appendMsg(StringBuilder b, Msg m) {
        long c = m.code();
        b.append((char) (c & 0xFF)).append((char) (c >>> 8 & 0xFF)).append((char) (c >>> 16 & 0xFF)).append((char) (c >>> 24 & 0xFF));
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int t = 0; t < doc.length; t++) {
            b.append("T").append(t + 1).append('{');
            if (doc[t] == null) {
                b.append("no document");
            } else {
                b.append(doc[t].stored()).append(tomb[t] ? " (tombstone)" : "").append(late[t] ? " (late insert)" : "")
                        .append(",e").append(epoch[t]).append(",age=").append(age[t]).append(",owner=")
                        .append(owner[t] == NO_OWNER ? "-" : owner[t] == CRASHED ? "crashed" : "P" + owner[t]);
            }
            b.append(told[t] == TOLD_COMMITTED ? ", caller told committed" : told[t] == TOLD_CANCELED ? ", caller told canceled" : "");
            b.append("} ");
        }
        for (int a = 0; a < balance.length; a++) {
            b.append(TwoRoundModel.ACCOUNT[a]).append("{balance=").append(balance[a]);
            for (int t = 0; t < doc.length; t++) {
                for (int i = 0; i < TwoRoundModel.OPS; i++) {
                    if (TwoRoundModel.ACC[t][i] == a && marker[t][i]) {
                        b.append(",T").append(t + 1);
                        if (image != NO_IMAGE && t == 0 && i == 1) {
                            b.append("(changed, before-image ").append(image).append(')');
                        }
                        if (doc[t] == null) {
                            b.append("(until now").append(until[t] >= 0 ? "+" : "").append(until[t]).append(')');
                        }
                    }
                }
            }
            b.append("} ");
        }
        for (int p = 0; p < procs.length; p++) {
            b.append("P").append(p).append('=').append(procs[p]).append(' ');
        }
        if (read != null) {
            b.append(read).append(' ');
        }
        if (!wire.isEmpty()) {
            b.append("wire=").append(wire);
        }
        return b.toString().trim();
    }
}
