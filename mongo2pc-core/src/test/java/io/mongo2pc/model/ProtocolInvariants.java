package io.mongo2pc.model;

import io.mongo2pc.TransactionState;

import java.util.Arrays;

import static io.mongo2pc.model.ProtocolModel.ACCOUNT;
import static io.mongo2pc.model.ProtocolModel.OPS;

/**
 * What must hold in every reachable state of {@link ProtocolModel}, on every step, and in every
 * finished state: no negative balance; each operation in effect 0 or 1 times, a marker only where
 * its operation is in effect; once committed both operations in effect, once canceled none,
 * forever; every state change one of the production {@link TransactionState} table's; and, once
 * finished, atomicity, money conserved and no marker left.
 */
final class ProtocolInvariants {
    private final ProtocolModel m;

    ProtocolInvariants(ProtocolModel model) {
        this.m = model;
    }

    /** Null if {@code s} satisfies every invariant, else what is violated. */
    String violation(ProtocolState s) {
        for (int i = 0; i < OPS; i++) {
            if (s.balance[i] < 0) {
                return "overdraft: " + ACCOUNT[i] + " has balance " + s.balance[i];
            }
            if (s.effect[i] < 0 || s.effect[i] > 1) {
                return "operation on " + ACCOUNT[i] + " is in effect " + s.effect[i] + " times";
            }
            if (s.marker[i] && s.effect[i] != 1) {
                return "marker on " + ACCOUNT[i] + " but its operation is not in effect";
            }
        }
        if (s.everCommitted && (s.effect[0] != 1 || s.effect[1] != 1)) {
            return "committed (applied/done reached) but operations in effect " + Arrays.toString(s.effect);
        }
        if (s.everCanceled && (s.effect[0] != 0 || s.effect[1] != 0)) {
            return "canceled but operations in effect " + Arrays.toString(s.effect);
        }
        if (s.everCommitted && s.everCanceled) {
            return "both committed and canceled";
        }
        if (m.finished(s)) {
            // Atomicity, once nothing is in flight: done with both in effect once, or canceled with none.
            int expected = s.doc == TransactionState.DONE ? 1 : 0;
            if (s.effect[0] != expected || s.effect[1] != expected) {
                return "finished " + s.doc.stored() + " with operations in effect " + Arrays.toString(s.effect);
            }
            if (s.balance[0] + s.balance[1] != m.initialBalances[0] + m.initialBalances[1]) {
                return "finished " + s.doc.stored() + " and money not conserved: " + Arrays.toString(s.balance);
            }
            if (s.marker[0] || s.marker[1]) {
                return "finished " + s.doc.stored() + " with markers left";
            }
        }
        return null;
    }

    /** Null if the step from {@code s} to {@code n} is allowed. */
    String transitionViolation(ProtocolState s, ProtocolState n) {
        if (n.doc != s.doc && !s.doc.canMoveTo(n.doc)) {
            return "state moved " + s.doc.stored() + " -> " + n.doc.stored();
        }
        return null;
    }
}
