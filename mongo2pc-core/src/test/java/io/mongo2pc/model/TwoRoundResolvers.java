package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.Model.Step;
import io.mongo2pc.model.TwoRoundServer.Result;
import io.mongo2pc.model.TwoRoundState.Kind;
import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Proc;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.CANCELED;
import static io.mongo2pc.TransactionState.CANCELING;
import static io.mongo2pc.TransactionState.DONE;
import static io.mongo2pc.TransactionState.PENDING;
import static io.mongo2pc.model.TwoRoundModel.ACC;
import static io.mongo2pc.model.TwoRoundModel.ACCOUNT;
import static io.mongo2pc.model.TwoRoundModel.OPS;
import static io.mongo2pc.model.TwoRoundState.NO_INSERT;

/**
 * The idle processes of {@link TwoRoundModel}: whoever meets a marker (a reader, a writer whose
 * prepare was refused, the sweep) and resolves it by its transaction's document (roll forward,
 * undo, tombstone; with the commit insert, the repair of a late document), and recovery reading a
 * stale transaction to take it over.
 */
final class TwoRoundResolvers {
    private final TwoRoundModel m;
    private final TwoRoundServer server;
    private final TwoRoundProcesses processes;
    private final CommitInsertOwner variant;

    TwoRoundResolvers(TwoRoundModel model, TwoRoundServer server, TwoRoundProcesses processes, CommitInsertOwner variant) {
        this.m = model;
        this.server = server;
        this.processes = processes;
        this.variant = variant;
    }

    /** What a process may do about a marker it met, and the label of that step. */
    record Resolution(String label, Consumer<TwoRoundState> apply) { }

    /**
     * What a process that meets a marker on account {@code a} may do about it, by the state of the
     * marker's transaction (any but {@code except}): roll forward (committed), undo (canceled), or
     * tombstone it (no document, and the entry's deadline + maxClockSkew has passed).
     */
    List<Resolution> resolutions(TwoRoundState s, int a, int except) {
        List<Resolution> out = new ArrayList<>();
        for (int t = 0; t < m.txs; t++) {
            for (int i = 0; i < OPS; i++) {
                if (t == except || ACC[t][i] != a || !s.marker[t][i]) {
                    continue;
                }
                int tx = t;
                int op = i;
                String where = "T" + (t + 1) + "'s marker on " + ACCOUNT[a];
                TransactionState state = s.doc[t];
                boolean late = m.countsLate(s, t); // the commit-insert variant: inserted late counts as canceled
                if ((state == APPLIED || state == DONE) && !late) {
                    out.add(new Resolution("rolls forward " + where, n -> server.rollForward(n, tx, op)));
                } else if (state == CANCELED || late) {
                    out.add(new Resolution("undoes " + where + " (canceled)", n -> server.undo(n, tx, op, true)));
                } else if (state == null && m.resolvable(s, t)) {
                    if (m.has(TwoRoundBug.RESOLVER_WITHOUT_TOMBSTONE)) {
                        out.add(new Resolution("undoes " + where + " without a tombstone", n -> server.undo(n, tx, op, true)));
                    } else {
                        out.add(new Resolution("meets " + where + " without a document: inserts a tombstone",
                                n -> server.tombstone(n, tx)));
                    }
                }
            }
        }
        return out;
    }

    void idleSteps(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        if (c.hand() != null) {
            Msg w = c.hand();
            processes.add(out, s, () -> "P" + p + " sends " + w, n -> {
                n.procs[p] = Proc.IDLE;
                if (server.execute(n, w) == Result.OK) {
                    int t = w.tx();
                    // With prune (and the commit insert, whose fallback is today's path), recovery rolls a
                    // pending document forward only with every prepare in effect: it may be a copy of its
                    // insert landing after its transaction finished and was pruned (docs/TWO-ROUND.md, recovery).
                    boolean allPrepared = n.marker[t][0] && n.marker[t][1];
                    boolean pendingCancels = n.late[t]
                            || (m.prune || m.commitInsert) && !allPrepared && !m.has(TwoRoundBug.RECOVERY_ROLLS_PENDING_FORWARD);
                    boolean cancel = w.cancel() || w.from() == PENDING && pendingCancels && !m.has(TwoRoundBug.LATE_INSERT_ROLLED_FORWARD);
                    n.procs[p] = Proc.owning(t, n.epoch[t], w.from(), m.deadline(n, t), NO_INSERT, 0, cancel);
                }
            });
            return;
        }
        for (int a = 0; a < s.balance.length; a++) {
            for (Resolution r : resolutions(s, a, -1)) {
                processes.add(out, s, () -> "P" + p + " " + r.label, r.apply);
            }
        }
        if (m.commitInsert) {
            variant.repairs(s, p, out);
        }
        for (int tx = 0; tx < m.txs; tx++) {
            int t = tx;
            TransactionState state = s.doc[t];
            if ((state == PENDING || state == APPLIED && !m.countsLate(s, t) || state == CANCELING) && s.age[t] >= m.lease) {
                for (boolean cancel : state == PENDING ? new boolean[] {false, true} : new boolean[] {false}) {
                    Msg read = new Msg(Kind.TAKEOVER, t, -1, 0, s.epoch[t], state, null, p, false, cancel);
                    processes.add(out, s, () -> "P" + p + " reads stale T" + (t + 1) + (cancel ? " to cancel it" : " to recover it"),
                            n -> n.procs[p] = Proc.IDLE.withHand(read));
                }
            }
        }
    }
}
