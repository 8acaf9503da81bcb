package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.Model.Step;

import java.util.List;

import static io.mongo2pc.model.TwoRoundModel.ACC;
import static io.mongo2pc.model.TwoRoundModel.ACCOUNT;
import static io.mongo2pc.model.TwoRoundModel.DELTA;
import static io.mongo2pc.model.TwoRoundModel.OPS;

/**
 * A reader of {@code readCommitted} whose reads are apart, as a cut makes them (docs/TWO-ROUND.md,
 * "Read committed"): it reads an account (its stored balance and the markers on it), then, in a later
 * step, the documents of the transactions those markers name, and computes the view from what it read
 * (a committed transaction's pending increase added, any other's hold taken back). Any number of
 * steps of others may come between, prune among them. A transaction not found committed (no document,
 * or one that counts as not committed) counts as not committed only if its marker is still on the
 * account in a read after the documents were read (else the reader starts again): prune may have
 * removed its document after it committed and released the marker, and a late copy of its insert may
 * have written another since. The view it returns must be the committed value of
 * the account at some moment of the read: every transaction committed before the read began in it,
 * none that had not committed by its end. With one transaction only (two would need the cut's other
 * checks, which this reader does not make).
 */
final class TwoRoundReader {
    /** What the reader found of a transaction's document: not read, committed, not committed, none. */
    static final int UNREAD = 0, COMMITTED = 1, NOT_COMMITTED = 2, NO_DOCUMENT = 3;
    /** Its steps: the account read, the documents read (it then returns its view, or starts again). */
    static final int ACCOUNT_READ = 1, DOCUMENTS_READ = 2;

    /**
     * The reader in the middle of a read, or null while idle: the account, the balance and markers it
     * read there ({@code marked}: one bit per transaction), the transactions committed when it began
     * (a ghost, one bit each), its step and what it found of each document (two bits each).
     */
    record Read(int account, int balance, int marked, int committedBefore, int phase, int found) {
        int found(int t) {
            return found >> (2 * t) & 3;
        }

        String code() {
            return "" + (char) account + (char) (balance + 16) + (char) marked + (char) committedBefore + (char) phase + (char) found;
        }

        @Override
        public String toString() {
            return "reader(" + ACCOUNT[account] + ": read balance " + balance + (marked == 0 ? "" : " with markers " + marked)
                    + (phase == DOCUMENTS_READ ? ", documents read " + found : "") + ")";
        }
    }

    private final TwoRoundModel m;

    TwoRoundReader(TwoRoundModel model) {
        this.m = model;
    }

    void steps(TwoRoundState s, List<Step<TwoRoundState>> out) {
        Read r = s.read;
        if (r == null) {
            for (int a = 0; a < s.balance.length; a++) {
                if (!touched(a)) {
                    continue; // nothing to judge there
                }
                int account = a;
                TwoRoundState n = s.copy();
                n.read = new Read(a, s.balance[a], marked(s, a), committedMask(s), ACCOUNT_READ, 0);
                out.add(new Step<>(() -> "a reader reads " + ACCOUNT[account] + " (balance " + s.balance[account] + ", markers "
                        + marked(s, account) + ")", m.normalize(n)));
            }
        } else if (r.phase() == ACCOUNT_READ) {
            int found = 0;
            for (int t = 0; t < m.txs; t++) {
                if ((r.marked() >> t & 1) != 0) {
                    int f = s.doc[t] == null ? NO_DOCUMENT : isCommitted(s, t) ? COMMITTED : NOT_COMMITTED;
                    found |= f << (2 * t);
                }
            }
            TwoRoundState n = s.copy();
            n.read = new Read(r.account(), r.balance(), r.marked(), r.committedBefore(), DOCUMENTS_READ, found);
            int f = found;
            out.add(new Step<>(() -> "the reader reads the transactions " + ACCOUNT[r.account()] + " names (found " + f + ")",
                    m.normalize(n)));
        } else {
            boolean returns = confirmed(s, r);
            TwoRoundState n = s.copy();
            n.read = null;
            out.add(new Step<>(() -> returns ? "the reader returns " + view(r) + " for " + ACCOUNT[r.account()]
                    : "the reader reads " + ACCOUNT[r.account()] + " again: a marker of a transaction not found committed"
                    + " is gone, it starts again", m.normalize(n)));
        }
    }

    /**
     * True if every transaction the reader did not find committed still has its marker on the account
     * (read again now): its document (none, or a late copy's) may otherwise say so because it committed,
     * released the marker and was pruned.
     */
    private boolean confirmed(TwoRoundState s, Read r) {
        for (int t = 0; t < m.txs; t++) {
            if ((r.marked() >> t & 1) != 0 && r.found(t) != COMMITTED && !m.has(TwoRoundBug.READER_WITHOUT_RECHECK)
                    && !markedOn(s, t, r.account())) {
                return false;
            }
        }
        return true;
    }

    /** Null, or, if the reader returns its view on this step, why that is a value no moment of its read had. */
    String violation(TwoRoundState s, TwoRoundState n) {
        Read r = s.read;
        if (r == null || r.phase() != DOCUMENTS_READ || n.read != null || !confirmed(s, r)) {
            return null;
        }
        int view = view(r);
        int now = committedMask(n);
        for (int mask = 0; mask < 1 << m.txs; mask++) {
            if ((mask & r.committedBefore()) == r.committedBefore() && (mask & ~now) == 0 && committedValue(r.account(), mask) == view) {
                return null;
            }
        }
        return "readCommitted(" + ACCOUNT[r.account()] + "), its reads apart, returned " + view
                + ": no moment of the read had that committed value (" + committedValue(r.account(), r.committedBefore())
                + " when it began, " + committedValue(r.account(), now) + " now)";
    }

    /** The view from what the reader read: each committed transaction's pending increase added, any other's hold taken back. */
    private int view(Read r) {
        int v = r.balance();
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if (ACC[t][i] != r.account() || (r.marked() >> t & 1) == 0) {
                    continue;
                }
                int now = m.appliedAtPrepare(t, i) ? DELTA[t][i] : 0;
                v += r.found(t) == COMMITTED ? DELTA[t][i] - now : -now;
            }
        }
        return v;
    }

    private boolean touched(int a) {
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if (ACC[t][i] == a) {
                    return true;
                }
            }
        }
        return false;
    }

    private int committedValue(int a, int mask) {
        int v = m.initial[a];
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if ((mask >> t & 1) != 0 && ACC[t][i] == a) {
                    v += DELTA[t][i];
                }
            }
        }
        return v;
    }

    private int committedMask(TwoRoundState s) {
        int mask = 0;
        for (int t = 0; t < m.txs; t++) {
            mask |= s.committed[t] ? 1 << t : 0;
        }
        return mask;
    }

    private int marked(TwoRoundState s, int a) {
        int mask = 0;
        for (int t = 0; t < m.txs; t++) {
            mask |= markedOn(s, t, a) ? 1 << t : 0;
        }
        return mask;
    }

    private static boolean markedOn(TwoRoundState s, int t, int a) {
        for (int i = 0; i < OPS; i++) {
            if (ACC[t][i] == a && s.marker[t][i]) {
                return true;
            }
        }
        return false;
    }

    /** Applied or done, and not a commit insert that ran after its deadline. */
    private boolean isCommitted(TwoRoundState s, int t) {
        return (s.doc[t] == TransactionState.APPLIED || s.doc[t] == TransactionState.DONE) && !m.countsLate(s, t);
    }
}
