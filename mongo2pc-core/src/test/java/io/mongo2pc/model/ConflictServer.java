package io.mongo2pc.model;

import io.mongo2pc.model.Model.Step;

import java.util.List;

import static io.mongo2pc.model.ConflictState.DONE;
import static io.mongo2pc.model.ConflictState.EXPIRED;
import static io.mongo2pc.model.ConflictState.NO;
import static io.mongo2pc.model.ConflictState.OLDER;
import static io.mongo2pc.model.ConflictState.REFUSED;
import static io.mongo2pc.model.ConflictState.WAITING;
import static io.mongo2pc.model.ConflictState.YOUNGER;

/**
 * The participant writes of {@link ConflictModel}: a prepare as it runs at the server (one atomic
 * write with its filter, and the read that says why it was refused: by committed state, by an older
 * holder, by younger holders only), and the release and undo of a document. Stateless.
 */
final class ConflictServer {
    private final ConflictModel m;

    ConflictServer(ConflictModel m) {
        this.m = m;
    }

    /** The prepare of {@code d} by {@code t} runs at the server: one atomic write with its filter, and the read that says why not. */
    void arrive(ConflictState s, int t, int d, List<Step<ConflictState>> out) {
        ConflictState n = s.copy();
        int result = prepare(n, t, d, s.wire[t][d]);
        n.wire[t][d] = NO;
        if (n.answer[t][d] == WAITING) {
            n.answer[t][d] = result;
            if (result == OLDER) {
                n.older[t] |= holders(s, d) & ((1 << t) - 1);
            }
        }
        out.add(new Step<>(() -> "T" + (t + 1) + "'s prepare of " + m.name(d) + " runs: " + ConflictState.ANSWERS[result]
                + (s.answer[t][d] == WAITING ? "" : " (nobody waits for its answer)"), n));
    }

    private int prepare(ConflictState n, int t, int d, int until) {
        if (until == 0) {
            return EXPIRED;
        }
        if (n.holds(m, t, d)) {
            return DONE;
        }
        int holders;
        if (m.takes(d)) {
            if (n.lock[d] == NO && !n.set[d]) {
                n.lock[d] = t;
                n.set[d] = true; // taken with its change, the before-image (unwritten) in the lock
                return DONE;
            }
            holders = n.lock[d] == NO ? 0 : 1 << n.lock[d];
        } else {
            if (n.balance[d] >= 1) {
                n.balance[d]--;
                n.holds[d] |= 1 << t;
                return DONE;
            }
            holders = n.holds[d];
        }
        if (holders == 0) {
            return REFUSED; // committed state: written, or no funds that an open transaction holds
        }
        if (m.has(ConflictBug.REFUSAL_BY_HOLDER_IS_FINAL)) {
            return REFUSED;
        }
        return (holders & ((1 << t) - 1)) != 0 ? OLDER : YOUNGER;
    }

    private int holders(ConflictState s, int d) {
        return m.takes(d) ? (s.lock[d] == NO ? 0 : 1 << s.lock[d]) : s.holds[d];
    }

    void release(ConflictState n, int t, int d) {
        if (m.takes(d)) {
            n.lock[d] = NO; // the change stays
        } else {
            n.holds[d] &= ~(1 << t); // the hold stays taken
        }
    }

    void giveBack(ConflictState n, int t, int d) {
        if (m.takes(d)) {
            n.lock[d] = NO;
            n.set[d] = false; // the before-image restored
        } else {
            n.holds[d] &= ~(1 << t);
            n.balance[d]++;
        }
    }
}
