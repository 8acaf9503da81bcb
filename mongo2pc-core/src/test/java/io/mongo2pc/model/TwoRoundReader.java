package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.Model.Step;

import java.util.List;

import static io.mongo2pc.model.TwoRoundModel.ACC;
import static io.mongo2pc.model.TwoRoundModel.ACCOUNT;
import static io.mongo2pc.model.TwoRoundModel.DELTA;
import static io.mongo2pc.model.TwoRoundModel.OPS;

/**
 * A reader of {@code readCommitted} whose reads are apart, as the code makes them (docs/TWO-ROUND.md,
 * "Read committed"): it reads an account (its stored balance and the markers on it), then the
 * documents of the transactions those markers name, one per step in any order, and computes the view
 * from what it read (a committed transaction's pending increase added, any other's hold taken back).
 * Any number of steps of others may come between, prune among them. If it found some committed and
 * others not, it reads the documents of those others again, one per step, after all the first reads:
 * one committed now starts the read again (it may have committed before one found committed: a view
 * with the later in and the earlier out is no moment). Then it reads the account again: it returns its
 * view if the account is unchanged; with one transaction, also if each transaction not found committed
 * still has its marker (the code's rule after many changes): prune may have removed the document of
 * a transaction that committed and released its marker, and a late copy of its insert may have written
 * another since. Otherwise it starts again. The view it returns must be the committed value of the
 * account at one moment of the read: a ghost keeps each committed mask some state of the read had.
 */
final class TwoRoundReader {
    /** What the reader found of a transaction's document: not read, committed, not committed, none. */
    static final int UNREAD = 0, COMMITTED = 1, NOT_COMMITTED = 2, NO_DOCUMENT = 3;

    /**
     * The reader in the middle of a read, or null while idle: the account, the balance and markers it
     * read there ({@code marked}: one bit per transaction), what it found of each document (two bits
     * each), the transactions whose documents it read again ({@code rechecked}), and a ghost: each
     * committed mask (one bit per transaction) that a state of the read had, one bit per mask.
     */
    record Read(int account, int balance, int marked, int found, int rechecked, int moments) {
        int found(int t) {
            return found >> (2 * t) & 3;
        }

        /** The transactions marked whose documents it has not read yet. */
        int unread() {
            int mask = 0;
            for (int t = 0; (marked >> t) != 0; t++) {
                mask |= (marked >> t & 1) != 0 && found(t) == UNREAD ? 1 << t : 0;
            }
            return mask;
        }

        /** The transactions marked it did not find committed. */
        int notCommitted() {
            int mask = 0;
            for (int t = 0; (marked >> t) != 0; t++) {
                mask |= (marked >> t & 1) != 0 && found(t) != COMMITTED ? 1 << t : 0;
            }
            return mask;
        }

        Read seen(int committedMask) {
            return new Read(account, balance, marked, found, rechecked, moments | 1 << committedMask);
        }

        String code() {
            return "" + (char) account + (char) (balance + 16) + (char) marked + (char) found + (char) rechecked + (char) moments;
        }

        @Override
        public String toString() {
            return "reader(" + ACCOUNT[account] + ": read balance " + balance + (marked == 0 ? "" : " with markers " + marked)
                    + (found == 0 ? "" : ", found " + found) + (rechecked == 0 ? "" : ", read again " + rechecked) + ")";
        }
    }

    private static final String[] FOUND = {"unread", "committed", "not committed", "no document"};

    private final TwoRoundModel m;
    /**
     * With two transactions, a read starts only on an account that carries both markers (the reads
     * the second read of the states is for), unless {@code -Dmodel.readerFromAnyState=true} (by hand:
     * the suite's search would be five times bigger).
     */
    private final boolean fromAnyState;

    TwoRoundReader(TwoRoundModel model) {
        this.m = model;
        this.fromAnyState = model.txs == 1 || Boolean.getBoolean("model.readerFromAnyState");
    }

    void steps(TwoRoundState s, List<Step<TwoRoundState>> out) {
        Read r = s.read;
        if (r == null) {
            for (int a = 0; a < s.balance.length; a++) {
                if (!touched(a) || !fromAnyState && marked(s, a) != (1 << m.txs) - 1) {
                    continue; // nothing to judge there
                }
                int account = a;
                TwoRoundState n = s.copy();
                n.read = new Read(a, s.balance[a], marked(s, a), 0, 0, 0);
                out.add(new Step<>(() -> "a reader reads " + ACCOUNT[account] + " (balance " + s.balance[account] + ", markers "
                        + marked(s, account) + ")", m.normalize(n)));
            }
            return;
        }
        int unread = r.unread();
        int recheck = toRecheck(r);
        for (int tx = 0; tx < m.txs; tx++) {
            int t = tx;
            if ((unread >> t & 1) != 0) {
                int f = s.doc[t] == null ? NO_DOCUMENT : isCommitted(s, t) ? COMMITTED : NOT_COMMITTED;
                TwoRoundState n = s.copy();
                n.read = new Read(r.account(), r.balance(), r.marked(), r.found() | f << (2 * t), r.rechecked(), r.moments());
                out.add(new Step<>(() -> "the reader reads T" + (t + 1) + "'s document (" + FOUND[f] + ")", m.normalize(n)));
            } else if (unread == 0 && (recheck >> t & 1) != 0) {
                boolean now = isCommitted(s, t);
                TwoRoundState n = s.copy();
                n.read = now ? null : new Read(r.account(), r.balance(), r.marked(), r.found(), r.rechecked() | 1 << t, r.moments());
                out.add(new Step<>(() -> "the reader reads T" + (t + 1) + "'s document again (" + (now
                        ? "committed now: it starts again)" : "still not committed)"), m.normalize(n)));
            }
        }
        if (unread == 0 && recheck == 0) {
            boolean returns = confirmed(s, r);
            TwoRoundState n = s.copy();
            n.read = null;
            out.add(new Step<>(() -> returns ? "the reader returns " + view(r) + " for " + ACCOUNT[r.account()]
                    : "the reader reads " + ACCOUNT[r.account()] + " again: it changed, it starts again", m.normalize(n)));
        }
    }

    /**
     * The transactions not found committed whose documents the reader has yet to read again: all of
     * them once it found another committed (none with {@link TwoRoundBug#READER_WITHOUT_STATE_REREAD}).
     */
    private int toRecheck(Read r) {
        int notCommitted = r.notCommitted();
        if (notCommitted == r.marked() || notCommitted == 0 || m.has(TwoRoundBug.READER_WITHOUT_STATE_REREAD)) {
            return 0;
        }
        return notCommitted & ~r.rechecked();
    }

    /**
     * True if the reader returns its view: the account, read again now, is unchanged; with one
     * transaction, also if every transaction it did not find committed still has its marker there
     * (its document, none or a late copy's, may otherwise say so because it committed, released the
     * marker and was pruned).
     */
    private boolean confirmed(TwoRoundState s, Read r) {
        if (m.has(TwoRoundBug.READER_WITHOUT_RECHECK)) {
            return true;
        }
        if (s.balance[r.account()] == r.balance() && marked(s, r.account()) == r.marked()) {
            return true;
        }
        for (int t = 0; t < m.txs; t++) {
            if ((r.notCommitted() >> t & 1) != 0 && !markedOn(s, t, r.account())) {
                return false;
            }
        }
        return m.txs == 1 || m.has(TwoRoundBug.READER_STILL_HELD_ONLY);
    }

    /** Null, or, if the reader returns its view on this step, why that is a value no moment of its read had. */
    String violation(TwoRoundState s, TwoRoundState n) {
        Read r = s.read;
        if (r == null || n.read != null || r.unread() != 0 || toRecheck(r) != 0 || !confirmed(s, r)) {
            return null;
        }
        int view = view(r);
        StringBuilder had = new StringBuilder();
        for (int mask = 0; mask < 1 << m.txs; mask++) {
            if ((r.moments() >> mask & 1) != 0) {
                if (committedValue(r.account(), mask) == view) {
                    return null;
                }
                had.append(had.length() == 0 ? "" : ", ").append(committedValue(r.account(), mask)).append(" with committed ").append(mask);
            }
        }
        return "readCommitted(" + ACCOUNT[r.account()] + "), its reads apart, returned " + view
                + ": no moment of the read had that committed value (its moments: " + had + ")";
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

    /**
     * True if the reader reads {@code a}: an account some transaction touches; with two, one both
     * touch (one transaction's account is the one-transaction reader's case).
     */
    private boolean touched(int a) {
        int by = 0;
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if (ACC[t][i] == a) {
                    by++;
                    break;
                }
            }
        }
        return by == m.txs;
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

    static int committedMask(TwoRoundState s) {
        int mask = 0;
        for (int t = 0; t < s.committed.length; t++) {
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
