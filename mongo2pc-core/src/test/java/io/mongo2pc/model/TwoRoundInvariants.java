package io.mongo2pc.model;

import io.mongo2pc.TransactionState;

import static io.mongo2pc.model.TwoRoundModel.ACC;
import static io.mongo2pc.model.TwoRoundModel.ACCOUNT;
import static io.mongo2pc.model.TwoRoundModel.DELTA;
import static io.mongo2pc.model.TwoRoundModel.OPS;

/**
 * What must hold in every reachable state of {@link TwoRoundModel}, on every step, and in every
 * finished state. The committed value of an account is its initial balance plus the changes of
 * the transactions that reached their commit point (a ghost set): the balance of the committed
 * prefix. It must never be negative (no guard relied on uncommitted data) and must equal what
 * readCommitted computes from the stored balance, the markers' entries and the transaction
 * documents' states.
 */
final class TwoRoundInvariants {
    private final TwoRoundModel m;

    TwoRoundInvariants(TwoRoundModel model) {
        this.m = model;
    }

    String violation(TwoRoundState s) {
        for (int a = 0; a < s.balance.length; a++) {
            if (s.balance[a] < 0) {
                return "overdraft: " + ACCOUNT[a] + " has stored balance " + s.balance[a];
            }
        }
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                String op = "T" + (t + 1) + "'s operation on " + ACCOUNT[ACC[t][i]];
                if (s.eff[t][i] < 0 || s.eff[t][i] > 1) {
                    return op + " is in effect " + s.eff[t][i] + " times";
                }
                int expected = m.appliedAtPrepare(t, i) || m.takes(t, i) && s.image != TwoRoundState.NO_IMAGE ? 1 : 0;
                if (s.marker[t][i] && s.eff[t][i] != expected) {
                    return "marker of " + op + " but its change is in effect " + s.eff[t][i] + " times (expected " + expected + ")";
                }
            }
            if (s.committed[t] && s.canceled[t]) {
                return "T" + (t + 1) + " both committed and canceled";
            }
            if ((s.told[t] & TwoRoundState.TOLD_COMMITTED) != 0 && s.canceled[t]) {
                return "T" + (t + 1) + "'s caller was told committed but T" + (t + 1) + " is canceled";
            }
            if ((s.told[t] & TwoRoundState.TOLD_CANCELED) != 0 && s.committed[t]) {
                return "T" + (t + 1) + "'s caller was told canceled but T" + (t + 1) + " committed";
            }
        }
        for (int a = 0; a < s.balance.length; a++) {
            int committed = committedValue(s, a);
            if (committed < 0) {
                return "the committed value of " + ACCOUNT[a] + " is " + committed
                        + ": a guard relied on a change that was not committed";
            }
            int read = readCommitted(s, a);
            if (read != committed) {
                return "readCommitted(" + ACCOUNT[a] + ") computes " + read + " but the committed value is " + committed;
            }
        }
        return m.finished(s) ? finishedViolation(s) : null;
    }

    /** Atomicity and cleanup once nothing is in flight and every transaction is terminal (or never got a document). */
    private String finishedViolation(TwoRoundState s) {
        int total = 0;
        int initial = 0;
        for (int a = 0; a < s.balance.length; a++) {
            total += s.balance[a];
            initial += m.initial[a];
        }
        for (int t = 0; t < m.txs; t++) {
            int expected = s.committed[t] ? 1 : 0;
            for (int i = 0; i < OPS; i++) {
                if (s.eff[t][i] != expected || s.marker[t][i]) {
                    return "finished with T" + (t + 1) + " " + (s.doc[t] == null ? "without a document" : s.doc[t].stored())
                            + " but its operation on " + ACCOUNT[ACC[t][i]] + " in effect " + s.eff[t][i] + " times"
                            + (s.marker[t][i] ? ", marker left" : "");
                }
            }
        }
        for (int a = 0; a < s.balance.length; a++) {
            if (s.balance[a] != committedValue(s, a)) {
                return "finished with " + ACCOUNT[a] + " = " + s.balance[a] + " but its committed value is " + committedValue(s, a);
            }
        }
        // money is conserved by transfers; an update sets a balance
        return total == initial || m.exclusive ? null : "finished and money not conserved: " + total + " instead of " + initial;
    }

    /** The initial balance with every committed transaction's changes to {@code a}, in the order they committed. */
    int committedValue(TwoRoundState s, int a) {
        int v = m.initial[a];
        int first = Math.max(0, s.firstCommitted);
        for (int k = 0; k < m.txs; k++) {
            int t = (first + k) % m.txs;
            for (int i = 0; i < OPS; i++) {
                if (s.committed[t] && ACC[t][i] == a) {
                    v = m.takes(t, i) ? TwoRoundModel.SET : v + DELTA[t][i];
                }
            }
        }
        return v;
    }

    /**
     * readCommitted's rule: the stored balance, plus each committed transaction's pending increase
     * ({@code entry.later}), minus each other transaction's held decrease ({@code entry.now}). A
     * transaction without a document counts as not committed.
     */
    int readCommitted(TwoRoundState s, int a) {
        int v = s.balance[a];
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if (m.takes(t, i) && ACC[t][i] == a && s.marker[t][i] && s.image != TwoRoundState.NO_IMAGE && !isCommitted(s, t)) {
                    v = s.image; // an update changed but not committed: the before-image in its lock
                }
            }
        }
        for (int t = 0; t < m.txs; t++) {
            boolean committed = isCommitted(s, t);
            for (int i = 0; i < OPS; i++) {
                if (ACC[t][i] != a || !s.marker[t][i] || m.takes(t, i)) {
                    continue; // an update: its change is in the stored value, its before-image in the lock
                }
                int now = m.appliedAtPrepare(t, i) ? DELTA[t][i] : 0;
                int later = DELTA[t][i] - now;
                if (committed) {
                    v += m.has(TwoRoundBug.READ_IGNORES_COMMITTED_CREDIT) ? 0 : later;
                } else {
                    v -= now;
                }
            }
        }
        return v;
    }

    /** readCommitted's view of {@code t}: applied or done, and (commit-insert variant) not inserted late. */
    private boolean isCommitted(TwoRoundState s, int t) {
        return (s.doc[t] == TransactionState.APPLIED || s.doc[t] == TransactionState.DONE) && !m.countsLate(s, t);
    }

    String transitionViolation(TwoRoundState s, TwoRoundState n) {
        for (int t = 0; t < m.txs; t++) {
            String name = "T" + (t + 1);
            TransactionState from = s.doc[t];
            TransactionState to = n.doc[t];
            if (from != to) {
                boolean created = from == null && (to == TransactionState.PENDING || to == TransactionState.CANCELED
                        && (n.tomb[t] || m.commitInsert) || to == TransactionState.APPLIED && m.commitInsert);
                boolean repaired = from == TransactionState.APPLIED && to == TransactionState.CANCELED && s.late[t] && m.commitInsert;
                boolean pruned = to == null && m.prune;
                if (!created && !repaired && !pruned && (from == null || to == null || !from.canMoveTo(to))) {
                    return name + "'s state moved " + (from == null ? "(none)" : from.stored()) + " -> "
                            + (to == null ? "(none)" : to.stored());
                }
            }
            if (n.committed[t] && !s.committed[t]) {
                for (int i = 0; i < OPS; i++) {
                    if (!n.marker[t][i]) {
                        return name + " committed before its operation on " + ACCOUNT[ACC[t][i]] + " was prepared";
                    }
                }
            }
            for (int i = 0; i < OPS; i++) {
                String op = name + "'s operation on " + ACCOUNT[ACC[t][i]];
                boolean markerAdded = !s.marker[t][i] && n.marker[t][i];
                if (markerAdded && (s.committed[t] || s.canceled[t])) {
                    return op + " was prepared after " + name + " was " + (s.committed[t] ? "committed" : "canceled");
                }
                if (n.eff[t][i] > s.eff[t][i] && s.canceled[t]) {
                    return op + " took effect after " + name + " was canceled";
                }
                if (n.eff[t][i] < s.eff[t][i] && s.committed[t]) {
                    return op + " was undone after " + name + " was committed";
                }
                if (n.eff[t][i] > s.eff[t][i] && !m.appliedAtPrepare(t, i) && !m.takes(t, i) && !s.committed[t]) {
                    return op + " (an increase) took effect before " + name + "'s commit point";
                }
            }
        }
        return null;
    }
}
