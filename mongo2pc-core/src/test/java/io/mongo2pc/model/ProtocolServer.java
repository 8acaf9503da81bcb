package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.ProtocolState.Coordinator;
import io.mongo2pc.model.ProtocolState.Write;

import static io.mongo2pc.model.ProtocolModel.DELTA;
import static io.mongo2pc.model.ProtocolState.CRASHED_OWNER;

/**
 * The database server of {@link ProtocolModel}: every write runs atomically, at the current time,
 * with the filter and update of the code it names ({@code TransactionStore.*} on the transaction
 * document, {@code IncrementWrites.*} and {@code Participants.fenced} on the accounts). The
 * transactions collection's clock is the reference; the participants' server runs
 * {@code behind} ticks behind it.
 */
final class ProtocolServer {

    /** What the server answered. */
    enum Result { OK, LOST, DONE, EXPIRED, REFUSED, /** only with MOVE_RETRY_ASSUMES_SUCCESS: no stamp */ ASSUMED }

    private final ProtocolModel m;

    ProtocolServer(ProtocolModel model) {
        this.m = model;
    }

    /**
     * The server runs one write atomically, at the current time. {@code sender} < 0: an orphan,
     * nobody hears the reply; a document it claims names {@link ProtocolState#CRASHED_OWNER} (owner
     * ids are per incarnation).
     */
    Result execute(ProtocolState s, Write w, int sender) {
        return switch (w.kind()) {
            case CLAIM -> claim(s, sender);
            case CANCEL_QUEUED -> {
                if (s.doc == TransactionState.INITIAL) {
                    setState(s, TransactionState.CANCELED);
                    touchDoc(s);
                    yield Result.OK;
                }
                yield Result.LOST;
            }
            case TAKEOVER -> takeOver(s, w, sender);
            case MOVE -> move(s, w);
            case RENEW -> renew(s, w);
            case APPLY -> apply(s, w);
            case UNDO -> markerWrite(s, w, true);
            case RELEASE -> markerWrite(s, w, false);
        };
    }

    /** TransactionStore.claim: one findAndModify on state initial. */
    private Result claim(ProtocolState s, int sender) {
        if (s.doc != TransactionState.INITIAL) {
            return Result.LOST;
        }
        setState(s, TransactionState.PENDING);
        s.docEpoch++;
        s.docOwner = sender < 0 ? CRASHED_OWNER : sender;
        touchDoc(s);
        return Result.OK;
    }

    /** TransactionStore.takeOver: CAS on state, epoch and lastModified <= staleBefore; epoch + 1, new owner. */
    private Result takeOver(ProtocolState s, Write w, int sender) {
        boolean stillStale = !w.touched() || m.has(Bug.TAKEOVER_WITHOUT_STALENESS_RECHECK);
        if (s.doc == w.from() && s.docEpoch == w.epoch() && stillStale) {
            s.docEpoch = m.has(Bug.TAKEOVER_WITHOUT_EPOCH_BUMP) ? w.epoch() : w.epoch() + 1;
            s.docOwner = sender < 0 ? CRASHED_OWNER : sender;
            touchDoc(s);
            return Result.OK;
        }
        // TakeOverAndDrive: our own takeover whose acknowledgement was lost.
        int expected = m.has(Bug.TAKEOVER_WITHOUT_EPOCH_BUMP) ? w.epoch() : w.epoch() + 1;
        if (sender >= 0 && s.docOwner == sender && s.docEpoch == expected) {
            return Result.OK;
        }
        return Result.LOST;
    }

    /** TransactionStore.move: CAS on state and epoch; OwnerWrites.move: a miss may be our own write with its ack lost. */
    private Result move(ProtocolState s, Write w) {
        boolean epochOk = s.docEpoch == w.epoch() || m.has(Bug.NO_EPOCH_IN_CAS);
        if (s.doc == w.from() && epochOk) {
            setState(s, w.to());
            touchDoc(s);
            return Result.OK;
        }
        if (s.doc == w.to() && (s.docEpoch == w.epoch() || m.has(Bug.NO_EPOCH_IN_CAS) || m.has(Bug.ACK_LOST_CHECK_WITHOUT_EPOCH))) {
            return Result.OK; // OwnerWrites.move: ackLost, the stored stamp becomes ours
        }
        return m.has(Bug.MOVE_RETRY_ASSUMES_SUCCESS) ? Result.ASSUMED : Result.LOST;
    }

    /** TransactionStore.renew: CAS on state and epoch, stamps lastModified. */
    private Result renew(ProtocolState s, Write w) {
        boolean epochOk = s.docEpoch == w.epoch() || m.has(Bug.NO_EPOCH_IN_CAS);
        if (s.doc == w.from() && epochOk) {
            touchDoc(s);
            return Result.OK;
        }
        return Result.LOST;
    }

    /** Participants.fenced: {$expr: {$lt: ["$$NOW", deadline]}}, $$NOW on the participants' server clock. */
    private boolean beforeDeadline(Write w) {
        if (m.has(Bug.NO_DEADLINE_CHECK)) {
            return true;
        }
        int left = w.left() + m.behind;
        return m.has(Bug.DEADLINE_OFF_BY_ONE) ? left >= 0 : left > 0;
    }

    /** IncrementWrites.apply: _id, marker absent, guard, $$NOW < deadline -> $inc and $push marker; else Refusals.whyNotApplied. */
    private Result apply(ProtocolState s, Write w) {
        int op = w.op();
        boolean markerAbsent = !s.marker[op] || m.has(Bug.APPLY_WITHOUT_MARKER_GUARD);
        boolean guard = s.balance[op] + DELTA[op] >= 0 || DELTA[op] > 0;
        if (markerAbsent && guard && beforeDeadline(w)) {
            s.balance[op] += DELTA[op];
            s.marker[op] = true;
            s.effect[op]++;
            return Result.DONE;
        }
        if (s.marker[op]) {
            return Result.DONE; // applied before
        }
        if (!beforeDeadline(w)) {
            return Result.EXPIRED;
        }
        return Result.REFUSED;
    }

    /** IncrementWrites.undo (inverse $inc + $pull) and IncrementWrites.release ($pull): marker present, $$NOW < deadline. */
    private Result markerWrite(ProtocolState s, Write w, boolean undo) {
        int op = w.op();
        boolean markerOk = s.marker[op] || (undo && m.has(Bug.UNDO_WITHOUT_MARKER_CHECK));
        if (markerOk && beforeDeadline(w)) {
            if (undo) {
                s.balance[op] -= DELTA[op];
                s.effect[op]--;
            }
            s.marker[op] = false;
            return Result.DONE;
        }
        return s.marker[op] ? Result.EXPIRED : Result.DONE;
    }

    private static void setState(ProtocolState s, TransactionState to) {
        if (to == TransactionState.APPLIED || to == TransactionState.DONE) {
            s.everCommitted = true;
        }
        if (to == TransactionState.CANCELED) {
            s.everCanceled = true;
        }
        s.doc = to;
    }

    /** Every write to the transaction document stamps lastModified with $currentDate. */
    private static void touchDoc(ProtocolState s) {
        s.docAge = 0;
        for (int i = 0; i < s.co.length; i++) {
            Coordinator c = s.co[i];
            if (c.hand() != null) {
                s.co[i] = c.withHand(c.hand().touch());
            }
        }
        s.orphans.replaceAll(Write::touch);
    }
}
