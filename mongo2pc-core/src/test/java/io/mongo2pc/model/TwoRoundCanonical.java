package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Phase;
import io.mongo2pc.model.TwoRoundState.Proc;

import static io.mongo2pc.model.TwoRoundModel.ACC;

/**
 * The canonical form of a {@link TwoRoundModel} state: what no rule reads any more is reset, orphans
 * that can change nothing are dropped, epochs are renumbered and processes renamed, so that time
 * and takeovers do not bound the search.
 */
final class TwoRoundCanonical {
    private final TwoRoundModel m;

    TwoRoundCanonical(TwoRoundModel model) {
        this.m = model;
    }

    /**
     * Canonical form: what no rule reads any more is reset (ages of documents nobody can take over,
     * deadlines of phases without fenced writes, entries' deadlines once a document exists), the
     * wire is sorted, and each transaction's epochs are renumbered keeping order, equality and
     * "is the next epoch".
     */
    TwoRoundState normalize(TwoRoundState s) {
        int txs = m.txs;
        int minLeft = m.minLeft;
        for (int t = 0; t < txs; t++) {
            if (s.doc[t] == null || s.doc[t].isTerminal() && !m.prune) {
                s.age[t] = 0; // with prune, a finished document's age says whether prune may delete it
            }
            if (s.doc[t] != TransactionState.PENDING && (!m.commitInsert || s.doc[t] == null)) {
                s.late[t] = false;
            }
            if (s.doc[t] != null && !m.prune || !s.anyMarker(t) && !prepareOnWire(s, t)) {
                // read only by resolvers of entries of a transaction without a document (with prune,
                // its document may go while entries are left)
                s.until[t] = minLeft;
            }
            renumberEpochs(s, t);
        }
        for (int p = 0; p < s.procs.length; p++) {
            Proc c = s.procs[p];
            if (c.owner() && (c.phase() == Phase.RELEASE || c.phase() == Phase.RESOLVER_UNDO)) {
                s.procs[p] = c.withLeft(0);
            }
        }
        s.wire.removeIf(w -> w.proc() < 0 && dead(s, w));
        s.wire.sort(null);
        return m.symmetric ? TwoRoundSymmetry.canonical(s) : s;
    }

    /**
     * An orphan that can never change anything again (nobody hears its answer): a fenced write past
     * its deadline on its server (time only moves on), or a compare-and-set on an epoch or state
     * the document has left (neither ever comes back).
     */
    private boolean dead(TwoRoundState s, Msg w) {
        return switch (w.kind()) {
            case PREPARE -> w.left() + m.behind[ACC[w.tx()][w.op()]] <= 0 && !m.has(TwoRoundBug.PREPARE_WITHOUT_DEADLINE);
            case CHANGE -> w.left() + m.behind[ACC[w.tx()][w.op()]] <= 0;
            case UNDO -> w.left() + m.behind[ACC[w.tx()][w.op()]] <= 0 && !m.has(TwoRoundBug.OWNER_UNDO_WITHOUT_DEADLINE);
            case INSERT, COMMIT_INSERT -> s.doc[w.tx()] != null && !m.prune; // a duplicate key, for ever unless pruned
            case RELEASE, RESOLVER_UNDO -> !s.marker[w.tx()][w.op()] && s.doc[w.tx()] != null && s.doc[w.tx()] != TransactionState.PENDING
                    && !m.has(TwoRoundBug.ROLL_FORWARD_WITHOUT_MARKER); // no prepare lands after the commit point or a cancel
            case MOVE, RENEW -> s.doc[w.tx()] != w.from() || s.epoch[w.tx()] != w.epoch();
            case TAKEOVER -> w.touched() || s.doc[w.tx()] != w.from() || s.epoch[w.tx()] != w.epoch();
            default -> false;
        };
    }

    private static boolean prepareOnWire(TwoRoundState s, int t) {
        for (Msg w : s.wire) {
            if ((w.kind() == TwoRoundState.Kind.PREPARE || w.kind() == TwoRoundState.Kind.CHANGE) && w.tx() == t) {
                return true;
            }
        }
        return false;
    }

    private static void renumberEpochs(TwoRoundState s, int t) {
        int[] used = new int[32];
        int n = 0;
        if (s.doc[t] != null) {
            used[n++] = s.epoch[t];
        }
        for (Proc c : s.procs) {
            if (c.owner() && c.tx() == t) {
                used[n++] = c.epoch();
            }
            if (c.move() != null && c.move().tx() == t) {
                used[n++] = c.move().epoch();
            }
            if (c.hand() != null && c.hand().tx() == t) {
                used[n++] = c.hand().epoch();
            }
        }
        for (Msg w : s.wire) {
            if (w.hasEpoch() && w.tx() == t) {
                used[n++] = w.epoch();
            }
        }
        if (n == 0) {
            s.epoch[t] = 0;
            return;
        }
        java.util.function.IntUnaryOperator map = Epochs.canonical(used, n);
        if (s.doc[t] != null) {
            s.epoch[t] = map.applyAsInt(s.epoch[t]);
        } else {
            s.epoch[t] = 0;
        }
        for (int p = 0; p < s.procs.length; p++) {
            Proc c = s.procs[p];
            if (c.owner() && c.tx() == t) {
                c = c.withEpoch(map.applyAsInt(c.epoch()));
            }
            if (c.move() != null && c.move().tx() == t) {
                c = c.withMove(c.move().withEpoch(map.applyAsInt(c.move().epoch())), c.moveDoubt());
            }
            if (c.hand() != null && c.hand().tx() == t) {
                c = c.withHand(c.hand().withEpoch(map.applyAsInt(c.hand().epoch())));
            }
            s.procs[p] = c;
        }
        s.wire.replaceAll(w -> w.hasEpoch() && w.tx() == t ? w.withEpoch(map.applyAsInt(w.epoch())) : w);
    }
}
