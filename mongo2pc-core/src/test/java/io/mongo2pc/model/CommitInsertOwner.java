package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.Model.Step;
import io.mongo2pc.model.TwoRoundState.Kind;
import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Phase;
import io.mongo2pc.model.TwoRoundState.Proc;

import java.util.List;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.DONE;
import static io.mongo2pc.model.TwoRoundModel.OPS;
import static io.mongo2pc.model.TwoRoundState.COMMIT_AGAIN_MINE;
import static io.mongo2pc.model.TwoRoundState.COMMIT_AGAIN_WIRE;
import static io.mongo2pc.model.TwoRoundState.COMMIT_DOUBT;
import static io.mongo2pc.model.TwoRoundState.COMMIT_MINE;
import static io.mongo2pc.model.TwoRoundState.COMMIT_WIRE;
import static io.mongo2pc.model.TwoRoundState.NO_DOC;
import static io.mongo2pc.model.TwoRoundState.NO_INSERT;
import static io.mongo2pc.model.TwoRoundState.WIRE;

/**
 * The owner's steps of the commit-insert variant of {@link TwoRoundModel} (docs/COMMIT-INSERT.md)
 * where they differ from today's rules: round 1 is the prepares alone; with every prepare in effect
 * the owner sends the commit insert (the document's first write, {@code applied}); it knows the
 * insert counts (ran before its deadline) from its own clock while the deadline is still ahead,
 * and otherwise reads the document back; a refusal cancels without a document (a canceled record,
 * then the undo by the nonce once the round is settled); a prepare in doubt before the deadline
 * makes it insert today's pending document and go on by today's rules. Also the repair of an
 * applied document inserted late, which anyone may do.
 */
final class CommitInsertOwner {
    private final TwoRoundModel m;
    private final TwoRoundServer server;
    private final TwoRoundProcesses processes;

    CommitInsertOwner(TwoRoundModel model, TwoRoundServer server, TwoRoundProcesses processes) {
        this.m = model;
        this.server = server;
        this.processes = processes;
    }

    /** Round 1: every prepare at once, and no document. */
    void start(TwoRoundState s, int p, int t, List<Step<TwoRoundState>> out) {
        processes.add(out, s, () -> "P" + p + " runs T" + (t + 1) + ": round 1 sends every prepare at once (no document)", n -> {
            int left = m.lease - m.skew;
            n.until[t] = left;
            n.procs[p] = Proc.owning(t, 1, TransactionState.PENDING, left, NO_DOC, 0, false);
            for (int i = 0; i < OPS; i++) {
                n.wire.add(new Msg(Kind.PREPARE, t, i, left, 0, null, null, p, false, false));
                n.procs[p] = n.procs[p].withSlot(i, WIRE);
            }
        });
    }

    /** The owner's steps once its commit insert was sent; false if {@code c} is not there. */
    boolean steps(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        int t = c.tx();
        switch (c.ins()) {
            case COMMIT_WIRE, COMMIT_AGAIN_WIRE -> { }
            case COMMIT_DOUBT -> processes.add(out, s, () -> "P" + p + " sends its commit insert of T" + (t + 1) + " again", n -> {
                n.wire.add(commitInsert(c, p));
                n.procs[p] = n.procs[p].withIns(COMMIT_AGAIN_WIRE);
            });
            case COMMIT_MINE, COMMIT_AGAIN_MINE -> {
                boolean trusts = m.has(TwoRoundBug.OWNER_TRUSTS_LATE_INSERT) || m.has(TwoRoundBug.NO_LATENESS_RULE);
                if (c.left() > 0 || trusts) {
                    processes.add(out, s, () -> "P" + p + " knows by its clock that its commit insert of T" + (t + 1)
                            + " ran before its deadline: committed", n -> committed(n, p, c, true));
                }
                processes.add(out, s, () -> "P" + p + " reads T" + (t + 1) + "'s document back", n -> readBack(n, p, c, trusts));
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    private void readBack(TwoRoundState n, int p, Proc c, boolean trusts) {
        int t = c.tx();
        TransactionState state = n.doc[t];
        if (state == null) {
            TwoRoundProcesses.stop(n, p); // pruned since: the outcome is the caller's to ask for
        } else if ((state == APPLIED || state == DONE) && (trusts || !n.late[t])) {
            committed(n, p, c, state == APPLIED && n.owner[t] == p && n.epoch[t] == c.epoch());
        } else if (c.ins() == COMMIT_AGAIN_MINE && !m.has(TwoRoundBug.OWNER_CANCELS_AMBIGUOUS_LATE_INSERT)) {
            // Inserted late by a copy sent again: the copy in doubt may have committed, finished and
            // been pruned before. Its prepares are settled either way (undone by anyone who meets
            // them), but the outcome is not known: the caller is told nothing.
            undo(n, p, c);
            n.procs[p] = n.procs[p].withCancel();
        } else {
            undo(n, p, c); // inserted late (or repaired to canceled since): canceled
        }
    }

    /** Tells the caller committed; releases, unless someone took the document over. */
    private void committed(TwoRoundState n, int p, Proc c, boolean release) {
        n.told[c.tx()] |= TwoRoundState.TOLD_COMMITTED;
        TwoRoundProcesses.stop(n, p);
        if (release) {
            n.procs[p] = Proc.owning(c.tx(), c.epoch(), APPLIED, 0, NO_INSERT, 0, false);
        }
    }

    private static void undo(TwoRoundState n, int p, Proc c) {
        TwoRoundProcesses.stop(n, p);
        n.procs[p] = c.withIns(NO_INSERT).withPhase(Phase.RESOLVER_UNDO);
    }

    private static Msg commitInsert(Proc c, int p) {
        return new Msg(Kind.COMMIT_INSERT, c.tx(), -1, c.left(), 0, null, null, p, false, false);
    }

    /** Every prepare in effect: the commit point, the document's first write. */
    void commit(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        processes.add(out, s, () -> "P" + p + " sends " + commitInsert(c, p), n -> {
            n.wire.add(commitInsert(c, p));
            n.procs[p] = n.procs[p].withIns(COMMIT_WIRE);
        });
    }

    /** A refusal that stands, or the deadline passed without a document: a canceled record, then the undo by the nonce. */
    void cancel(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        int t = c.tx();
        processes.add(out, s, () -> "P" + p + " cancels T" + (t + 1) + " without a document: inserts its canceled record,"
                + " undoes its prepares by the nonce", n -> {
            server.record(n, t);
            undo(n, p, c);
        });
    }

    /** A prepare in doubt before the deadline: the pending document of today's rules, which can be renewed. */
    void fallBack(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        int t = c.tx();
        Msg insert = new Msg(Kind.INSERT, t, -1, c.left(), 0, null, null, p, false, false);
        processes.add(out, s, () -> "P" + p + " has a prepare in doubt: sends " + insert + " (pending; today's rules from here)", n -> {
            n.wire.add(insert);
            n.procs[p] = n.procs[p].withIns(WIRE);
        });
    }

    /** Anyone may repair an applied document inserted late: {@code {_id, state: applied, insertedAt >= until}} -> canceled. */
    void repairs(TwoRoundState s, int p, List<Step<TwoRoundState>> out) {
        for (int tx = 0; tx < m.txs; tx++) {
            int t = tx;
            if (s.doc[t] == APPLIED && m.countsLate(s, t)) {
                processes.add(out, s, () -> "P" + p + " repairs T" + (t + 1) + "'s document inserted late: applied -> canceled",
                        n -> server.repair(n, t));
            }
        }
    }
}
