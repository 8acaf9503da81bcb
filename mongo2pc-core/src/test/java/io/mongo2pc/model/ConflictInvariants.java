package io.mongo2pc.model;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

import static io.mongo2pc.model.ConflictState.APPLIED;
import static io.mongo2pc.model.ConflictState.CANCELED;
import static io.mongo2pc.model.ConflictState.NO;
import static io.mongo2pc.model.ConflictState.PENDING;
import static io.mongo2pc.model.ConflictState.REFUSED;
import static io.mongo2pc.model.ConflictState.ROUND;
import static io.mongo2pc.model.ConflictState.START;
import static io.mongo2pc.model.ConflictState.UNDO_YIELD;
import static io.mongo2pc.model.ConflictState.WAIT_OLDER;
import static io.mongo2pc.model.ConflictState.YOUNGER;

/**
 * What must hold in {@link ConflictModel} (docs/MODEL.md, "Conflicts between open transactions"):
 * nothing paid twice, no balance below zero, no prepare of a released round landing, no commit
 * without every prepare, and in a finished state what the committed transaction wrote and, unless
 * every transaction was crashed or taken over, a committed one; and the situations a run must reach.
 */
final class ConflictInvariants {
    private final ConflictModel m;

    ConflictInvariants(ConflictModel m) {
        this.m = m;
    }

    String violation(ConflictState s) {
        if (s.committed() > 1) {
            return "two transactions committed: the order paid twice";
        }
        for (int d = 0; d < m.docs(); d++) {
            if (s.balance[d] < 0) {
                return "the balance of " + m.name(d) + " is " + s.balance[d];
            }
        }
        if (!finished(s)) {
            return null;
        }
        int committed = s.committed();
        for (int d = 0; d < m.docs(); d++) {
            if (m.takes(d) ? s.set[d] != (committed == 1) : s.balance[d] != 1 - committed) {
                return "finished, but " + m.name(d) + " is not what the committed transactions wrote";
            }
        }
        for (int t = 0; t < m.txs; t++) {
            if (committed == 0 && !s.crashed[t] && !s.takenOver[t]) {
                return "nobody pays: T" + (t + 1) + "'s owner ran to its end, canceled, and no transaction committed";
            }
        }
        return null;
    }

    String transitionViolation(ConflictState from, ConflictState to) {
        for (int t = 0; t < m.txs; t++) {
            for (int d = 0; d < m.docs(); d++) {
                if (!from.holds(m, t, d) && to.holds(m, t, d)
                        && (from.phase[t] == UNDO_YIELD || from.phase[t] == WAIT_OLDER || from.tx[t] != PENDING)) {
                    return "a prepare of T" + (t + 1) + " landed on " + m.name(d) + " after its owner released its round ("
                            + ConflictState.PHASES[from.phase[t]] + ", " + ConflictState.STATES[from.tx[t]] + ")";
                }
            }
            if (from.tx[t] != APPLIED && to.tx[t] == APPLIED) {
                for (int d = 0; d < m.docs(); d++) {
                    if (!to.holds(m, t, d)) {
                        return "T" + (t + 1) + " committed without its prepare of " + m.name(d);
                    }
                }
            }
        }
        return null;
    }

    boolean finished(ConflictState s) {
        for (int t = 0; t < m.txs; t++) {
            if (s.tx[t] != APPLIED && s.tx[t] != CANCELED || s.phase[t] == START || s.holdsAny(m, t)) {
                return false;
            }
            for (int d = 0; d < m.docs(); d++) {
                if (s.wire[t][d] != NO) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Situations a run must reach, so that no invariant holds in vain. */
    Map<String, Predicate<ConflictState>> situations() {
        Map<String, Predicate<ConflictState>> reached = new LinkedHashMap<>();
        reached.put("two transactions each hold part", s -> {
            int holding = 0;
            for (int t = 0; t < m.txs; t++) {
                holding += s.tx[t] == PENDING && s.holdsAny(m, t) ? 1 : 0;
            }
            return holding >= 2;
        });
        reached.put("a younger transaction yielded and waits", s -> {
            for (int t = 0; t < m.txs; t++) {
                if (s.phase[t] == WAIT_OLDER) {
                    return true;
                }
            }
            return false;
        });
        reached.put("an older transaction waits for a younger one", s -> {
            for (int t = 0; t < m.txs; t++) {
                for (int d = 0; d < m.docs(); d++) {
                    if (s.answer[t][d] == YOUNGER && s.phase[t] == ROUND) {
                        return true;
                    }
                }
            }
            return false;
        });
        reached.put("the youngest committed", s -> s.tx[m.txs - 1] == APPLIED);
        reached.put("a transaction refused by committed state", s -> {
            for (int t = 0; t < m.txs; t++) {
                for (int d = 0; d < m.docs(); d++) {
                    if (s.answer[t][d] == REFUSED && s.committed() == 1) {
                        return true;
                    }
                }
            }
            return false;
        });
        return reached;
    }
}
