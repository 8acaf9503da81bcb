package io.mongo2pc.model;

/**
 * A state of {@link ConflictModel}: the participant documents, each transaction's document state
 * and owner, and the prepares on the wire. Time is relative to now: deadlines are distances
 * ({@code 0}: passed), so neither time nor the number of attempts is bounded. Mutable while a
 * successor is built, then only read.
 */
final class ConflictState {
    // the owner's phase
    static final int START = 0;
    static final int ROUND = 1;
    static final int UNDO_YIELD = 2;
    static final int WAIT_OLDER = 3;
    static final int UNDO_CANCEL = 4;
    static final int END = 5;
    static final int GONE = 6;
    static final String[] PHASES = {"start", "round", "yielding", "waitsForOlder", "canceling", "end", "gone"};

    // the transaction document's state
    static final int PENDING = 0;
    static final int CANCELING = 1;
    static final int APPLIED = 2;
    static final int CANCELED = 3;
    static final String[] STATES = {"pending", "canceling", "applied", "canceled"};

    // what the owner knows of a prepare
    static final int NONE = 0;
    static final int WAITING = 1;
    static final int DONE = 2;
    static final int REFUSED = 3;
    /** Refused by an open transaction's hold, and an older one among the holders: yield. */
    static final int OLDER = 4;
    /** Refused by open transactions' holds, every one younger: wait. */
    static final int YOUNGER = 5;
    static final int EXPIRED = 6;
    static final int IN_DOUBT = 7;
    static final String[] ANSWERS = {"-", "waiting", "done", "refused", "byOlder", "byYounger", "expired", "inDoubt"};

    /** No message on the wire / no lock. */
    static final int NO = -1;

    int[] phase;
    int[] tx;
    /** The owner's deadline, as a distance from now; 0 once passed. */
    int[] left;
    int[][] answer;
    /** The deadline distance of the prepare of [t][doc] on the wire, or {@link #NO}. */
    int[][] wire;
    /** The deadline distance the last prepare of [t][doc] was sent under (an answer in doubt is waited out until it is 0). */
    int[][] sent;
    /** The older holders a transaction met in its round (one bit each); once it yields, those it waits to finish. */
    int[] older;
    boolean[] crashed;
    boolean[] takenOver;
    /** Per document: a take document's lock (a transaction, or {@link #NO}). */
    int[] lock;
    /** Per document: a take document's value is written (the order paid, the payment inserted). */
    boolean[] set;
    /** Per document: a hold document's balance. */
    int[] balance;
    /** Per document: a hold document's holds, one bit per transaction. */
    int[] holds;
    int crashesLeft;
    int lossesLeft;
    /** For printing only. */
    ConflictModel model;

    ConflictState copy() {
        ConflictState c = new ConflictState();
        c.model = model;
        c.phase = phase.clone();
        c.tx = tx.clone();
        c.left = left.clone();
        c.answer = deep(answer);
        c.wire = deep(wire);
        c.sent = deep(sent);
        c.older = older.clone();
        c.crashed = crashed.clone();
        c.takenOver = takenOver.clone();
        c.lock = lock.clone();
        c.set = set.clone();
        c.balance = balance.clone();
        c.holds = holds.clone();
        c.crashesLeft = crashesLeft;
        c.lossesLeft = lossesLeft;
        return c;
    }

    private static int[][] deep(int[][] a) {
        int[][] c = new int[a.length][];
        for (int i = 0; i < a.length; i++) {
            c[i] = a[i].clone();
        }
        return c;
    }

    /** True if transaction {@code t} holds document {@code d} (a lock or a hold). */
    boolean holds(ConflictModel m, int t, int d) {
        return m.takes(d) ? lock[d] == t : (holds[d] & (1 << t)) != 0;
    }

    /** True if {@code t} holds any document. */
    boolean holdsAny(ConflictModel m, int t) {
        for (int d = 0; d < lock.length; d++) {
            if (holds(m, t, d)) {
                return true;
            }
        }
        return false;
    }

    /** True if every transaction in {@code which} (one bit each) is committed or canceled. */
    boolean ended(int which) {
        for (int u = 0; u < tx.length; u++) {
            if ((which & (1 << u)) != 0 && tx[u] != APPLIED && tx[u] != CANCELED) {
                return false;
            }
        }
        return true;
    }

    int committed() {
        int n = 0;
        for (int s : tx) {
            n += s == APPLIED ? 1 : 0;
        }
        return n;
    }

    String key() {
        StringBuilder b = new StringBuilder();
        for (int t = 0; t < phase.length; t++) {
            b.append(phase[t]).append(tx[t]).append(left[t]).append(older[t]).append(crashed[t] ? 'c' : '.')
                    .append(takenOver[t] ? 't' : '.');
            for (int d = 0; d < lock.length; d++) {
                b.append(answer[t][d]).append(wire[t][d] + 1).append(sent[t][d]);
            }
            b.append('|');
        }
        for (int d = 0; d < lock.length; d++) {
            b.append(lock[d] + 1).append(set[d] ? 's' : '.').append(balance[d]).append(',').append(holds[d]).append(';');
        }
        return b.append(crashesLeft).append(lossesLeft).toString();
    }

    @Override
    public String toString() {
        return describe(model);
    }

    private String describe(ConflictModel m) {
        StringBuilder b = new StringBuilder();
        for (int t = 0; t < phase.length; t++) {
            b.append('T').append(t + 1).append(": ").append(STATES[tx[t]]).append(", owner ").append(PHASES[phase[t]])
                    .append(crashed[t] ? " (crashed)" : "").append(takenOver[t] ? " (taken over)" : "")
                    .append(", until ").append(left[t]);
            if (older[t] != 0) {
                b.append(phase[t] == WAIT_OLDER ? ", waits for " : ", met older ").append(Integer.toBinaryString(older[t]));
            }
            for (int d = 0; d < lock.length; d++) {
                b.append(", ").append(m.name(d)).append(':').append(ANSWERS[answer[t][d]]);
                if (wire[t][d] != NO) {
                    b.append("(on the wire, until ").append(wire[t][d]).append(')');
                }
            }
            b.append("; ");
        }
        for (int d = 0; d < lock.length; d++) {
            b.append(m.name(d)).append(m.takes(d) ? (set[d] ? " written" : " unwritten") + (lock[d] == NO ? "" : " locked by T" + (lock[d] + 1))
                    : " balance " + balance[d] + (holds[d] == 0 ? "" : " holds " + Integer.toBinaryString(holds[d]))).append("; ");
        }
        return b.toString();
    }
}
