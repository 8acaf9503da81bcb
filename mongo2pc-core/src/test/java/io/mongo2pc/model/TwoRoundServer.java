package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.TwoRoundState.Kind;
import io.mongo2pc.model.TwoRoundState.Msg;

import static io.mongo2pc.model.TwoRoundModel.ACC;
import static io.mongo2pc.model.TwoRoundModel.DELTA;

/**
 * The database servers of {@link TwoRoundModel}: every write runs atomically with the filter and
 * update of the rule it models (docs/TWO-ROUND.md), and so do the
 * resolvers' writes. The transactions collection's clock is the reference; each account's server
 * runs {@code behind[account]} ticks behind it (at most maxClockSkew).
 */
final class TwoRoundServer {

    /** What the server answered. */
    enum Result { OK, MINE, TOMB, LOST, DONE, TAKEN, REFUSED, EXPIRED }

    private final TwoRoundModel m;

    TwoRoundServer(TwoRoundModel model) {
        this.m = model;
    }

    /** Runs {@code w}; a document it creates for an orphan names the crashed incarnation. */
    Result execute(TwoRoundState s, Msg w) {
        return switch (w.kind()) {
            case INSERT -> insert(s, w);
            case COMMIT_INSERT -> commitInsert(s, w);
            case PREPARE -> prepare(s, w);
            case CHANGE -> change(s, w);
            case UNDO -> undo(s, w.tx(), w.op(), m.has(TwoRoundBug.OWNER_UNDO_WITHOUT_DEADLINE) || fenceOpen(w));
            case RESOLVER_UNDO -> undo(s, w.tx(), w.op(), true);
            case RELEASE -> rollForward(s, w.tx(), w.op());
            case MOVE -> move(s, w);
            case RENEW -> renew(s, w);
            case TAKEOVER -> takeOver(s, w);
        };
    }

    /**
     * The document's insert-if-absent: an upsert on {@code {_id, insertedAt: {$exists: false}}}, which
     * no stored document matches. Absent: inserted pending, epoch 1, stamped, {@code late} if it ran
     * at or after its round's deadline. Present: a duplicate key; the owner reads it and tells its
     * own (token, epoch 1) from a tombstone and from a document someone took over.
     */
    private Result insert(TwoRoundState s, Msg w) {
        int t = w.tx();
        if (s.doc[t] == null) {
            s.doc[t] = TransactionState.PENDING;
            s.epoch[t] = 1;
            s.owner[t] = w.proc() >= 0 ? w.proc() : TwoRoundState.CRASHED;
            s.late[t] = w.left() <= 0;
            touch(s, t);
            return Result.MINE;
        }
        if (s.tomb[t]) {
            return Result.TOMB;
        }
        return w.proc() >= 0 && s.owner[t] == w.proc() ? Result.MINE : Result.LOST; // its token, not taken over since
    }

    /**
     * The commit-insert variant's commit point: the same insert-if-absent, of the document already
     * {@code applied}, stamped {@code insertedAt}; {@code late} if it ran at or after the round's
     * deadline, and then it counts as canceled (the lateness rule). A duplicate key is read back as
     * for the insert of round 1.
     */
    private Result commitInsert(TwoRoundState s, Msg w) {
        int t = w.tx();
        if (s.doc[t] != null) {
            return s.tomb[t] ? Result.TOMB : w.proc() >= 0 && s.owner[t] == w.proc() ? Result.MINE : Result.LOST;
        }
        boolean late = w.left() <= 0;
        boolean counts = !late || m.has(TwoRoundBug.NO_LATENESS_RULE);
        s.epoch[t] = 1;
        s.owner[t] = w.proc() >= 0 ? w.proc() : TwoRoundState.CRASHED;
        s.late[t] = late;
        if (counts) {
            setState(s, t, TransactionState.APPLIED);
        } else {
            s.doc[t] = TransactionState.APPLIED; // stored applied, counts as canceled from the start
            if (!s.pruned[t] || !s.committed[t]) {
                s.canceled[t] = true;
            }
        }
        touch(s, t);
        return Result.MINE;
    }

    /** The owner's record of a cancel without a document: inserted {@code canceled} if absent (no tombstone flag). */
    void record(TwoRoundState s, int t) {
        if (s.doc[t] == null) {
            setState(s, t, TransactionState.CANCELED);
            s.epoch[t] = 0;
            s.owner[t] = TwoRoundState.NO_OWNER;
            touch(s, t);
        }
    }

    /** The repair of an applied document inserted late: {@code {_id, state: applied, late}} -> canceled. */
    void repair(TwoRoundState s, int t) {
        if (s.doc[t] == TransactionState.APPLIED && s.late[t]) {
            s.doc[t] = TransactionState.CANCELED;
            touch(s, t);
        }
    }

    /**
     * Hold, mark or take (an exclusive update: no other transaction's marker; the lock alone, no
     * change): {@code {_id, marker: {$ne: t}, <guard>, $expr: {$lt: [$$NOW, until]}}} ->
     * {@code {$inc: <decreases>, $push: marker, $set: entry}}. A miss is read back: the marker is
     * there (done before; for an update TAKEN until its change is in), the deadline passed
     * (expired), or the guard fails (refused). An increment's miss is told as the code tells it
     * (Entries.whyNotPrepared): another's lock, or a guard that fails, refuses (busy) whatever the
     * deadline says; only a guard that holds lets the deadline answer expired.
     */
    private Result prepare(TwoRoundState s, Msg w) {
        int t = w.tx();
        int i = w.op();
        int a = ACC[t][i];
        boolean guard = m.guardHolds(s, t, i) && !m.blocked(s, t, i);
        boolean open = m.has(TwoRoundBug.PREPARE_WITHOUT_DEADLINE) || fenceOpen(w);
        if (!s.marker[t][i] && guard && open) {
            s.marker[t][i] = true;
            if (m.appliedAtPrepare(t, i)) {
                s.balance[a] += DELTA[t][i];
                s.eff[t][i]++;
            }
            return m.takes(t, i) && !m.has(TwoRoundBug.CHANGE_AT_RELEASE) ? Result.TAKEN : Result.DONE;
        }
        if (s.marker[t][i]) {
            return m.takes(t, i) && s.image == TwoRoundState.NO_IMAGE && !m.has(TwoRoundBug.CHANGE_AT_RELEASE) ? Result.TAKEN : Result.DONE;
        }
        if (!open && !m.takes(t, i) && (!m.guardHolds(s, t, i) || m.blocked(s, t, i))) {
            return Result.REFUSED;
        }
        return open ? Result.REFUSED : Result.EXPIRED;
    }

    /**
     * Round 1b of the exclusive update: {@code {_id, _m2pc.tx: t, _m2pc.undo: {$exists: false},
     * $expr: {$lt: [$$NOW, until]}}} -> the change, and the before-image into the lock, in one write.
     * A miss is read back: the before-image is there (done before), else expired (the deadline, or
     * the lock gone: taken again by the next prepare). A server that refuses the change (a unique
     * index, a validator) refuses it here, before the commit point.
     */
    private Result change(TwoRoundState s, Msg w) {
        int t = w.tx();
        int i = w.op();
        boolean unchanged = s.image == TwoRoundState.NO_IMAGE || m.has(TwoRoundBug.CHANGE_OVERWRITES_BEFORE_IMAGE);
        boolean locked = s.marker[t][i] || m.has(TwoRoundBug.CHANGE_WITHOUT_LOCK);
        if (locked && unchanged && fenceOpen(w)) {
            if (m.refusesChange) {
                return Result.REFUSED;
            }
            s.image = s.balance[ACC[t][i]];
            s.balance[ACC[t][i]] = TwoRoundModel.SET;
            s.eff[t][i] = 1;
            return Result.DONE;
        }
        return s.marker[t][i] && s.image != TwoRoundState.NO_IMAGE ? Result.DONE : Result.EXPIRED;
    }

    /** {@code $$NOW < deadline} on the account's server, whose clock runs behind the reference. */
    private boolean fenceOpen(Msg w) {
        return w.left() + m.behind[ACC[w.tx()][w.op()]] > 0;
    }

    /**
     * Undo: {@code {_id, marker: t [, $expr deadline]}} -> {@code {$inc: -<decreases>, $pull, $unset entry}}.
     * The owner's (canceling) carries its deadline; a resolver's (tombstone) needs none. Answers
     * DONE when the marker is gone (now or before), EXPIRED when only the deadline refused it.
     */
    Result undo(TwoRoundState s, int t, int i, boolean open) {
        if (s.marker[t][i] && open) {
            s.marker[t][i] = false;
            if (m.takes(t, i) && s.image != TwoRoundState.NO_IMAGE) {
                if (!m.has(TwoRoundBug.UNDO_WITHOUT_RESTORE)) {
                    s.balance[ACC[t][i]] = s.image; // the before-image restored, the lock removed: one write
                    s.eff[t][i]--;
                }
                s.image = TwoRoundState.NO_IMAGE;
            }
            if (m.appliedAtPrepare(t, i)) {
                s.balance[ACC[t][i]] -= DELTA[t][i];
                s.eff[t][i]--;
            }
            return Result.DONE;
        }
        return s.marker[t][i] ? Result.EXPIRED : Result.DONE;
    }

    /**
     * Roll-forward by anyone: {@code {_id, marker: t}} -> {@code {$inc: <increases>, $pull, $unset entry}};
     * an exclusive update's release only removes its lock (with its before-image): the change is in.
     */
    Result rollForward(TwoRoundState s, int t, int i) {
        boolean match = s.marker[t][i] || m.has(TwoRoundBug.ROLL_FORWARD_WITHOUT_MARKER);
        if (match && m.takes(t, i) && m.has(TwoRoundBug.CHANGE_AT_RELEASE)) {
            if (m.refusesChange) {
                return Result.REFUSED; // refused after the commit point: the lock stays
            }
            s.marker[t][i] = false;
            s.balance[ACC[t][i]] = TwoRoundModel.SET;
            s.eff[t][i]++;
            return Result.DONE;
        }
        if (match) {
            s.marker[t][i] = false;
            if (m.takes(t, i)) {
                s.image = TwoRoundState.NO_IMAGE;
            } else if (!m.appliedAtPrepare(t, i)) {
                s.balance[ACC[t][i]] += DELTA[t][i];
                s.eff[t][i]++;
            }
        }
        return Result.DONE;
    }

    /** A resolver's tombstone: the same insert-if-absent, as {@code canceled} with no owner. */
    void tombstone(TwoRoundState s, int t) {
        if (s.doc[t] == null) {
            setState(s, t, TransactionState.CANCELED);
            s.tomb[t] = true;
            s.epoch[t] = 0;
            s.owner[t] = TwoRoundState.NO_OWNER;
            touch(s, t);
        }
    }

    /** CAS on state and epoch; a miss that finds the target state under our epoch is our own lost answer. */
    private Result move(TwoRoundState s, Msg w) {
        int t = w.tx();
        // The commit requires insertedAt < until (docs/TWO-ROUND.md, round 2): it matters with prune or the commit insert.
        boolean lateCommit = (m.prune || m.commitInsert) && w.to() == TransactionState.APPLIED && s.late[t] && !m.has(TwoRoundBug.COMMIT_CAS_IGNORES_LATE_INSERT);
        if (s.doc[t] == w.from() && s.epoch[t] == w.epoch() && !lateCommit) {
            setState(s, t, w.to());
            touch(s, t);
            return Result.OK;
        }
        return s.doc[t] == w.to() && s.epoch[t] == w.epoch() ? Result.OK : Result.LOST;
    }

    private Result renew(TwoRoundState s, Msg w) {
        int t = w.tx();
        // A document inserted late is never renewed, its prepares never sent again (with prune or the commit insert).
        boolean late = (m.prune || m.commitInsert) && s.late[t] && !m.has(TwoRoundBug.RENEW_IGNORES_LATE_INSERT);
        if (s.doc[t] == w.from() && s.epoch[t] == w.epoch() && !late) {
            touch(s, t);
            return Result.OK;
        }
        return Result.LOST;
    }

    /** CAS on state, epoch and {@code lastModified <= staleBefore} (nothing written since the read); epoch + 1. */
    private Result takeOver(TwoRoundState s, Msg w) {
        int t = w.tx();
        if (s.doc[t] == w.from() && s.epoch[t] == w.epoch() && !w.touched()) {
            s.epoch[t] = w.epoch() + 1;
            s.owner[t] = w.proc() >= 0 ? w.proc() : TwoRoundState.CRASHED;
            touch(s, t);
            return Result.OK;
        }
        return Result.LOST;
    }

    private static void setState(TwoRoundState s, int t, TransactionState to) {
        if (s.pruned[t] && (s.committed[t] || s.canceled[t])) {
            s.doc[t] = to; // a late copy's document after prune: the transaction was decided before
            return;
        }
        if (to == TransactionState.APPLIED) {
            s.committed[t] = true;
            if (s.firstCommitted < 0) {
                s.firstCommitted = t;
            }
        }
        if (to == TransactionState.CANCELED) {
            s.canceled[t] = true;
        }
        s.doc[t] = to;
    }

    /** Every write of a transaction document stamps lastModified: takeovers read before it no longer match. */
    private static void touch(TwoRoundState s, int t) {
        s.age[t] = 0;
        for (int p = 0; p < s.procs.length; p++) {
            Msg h = s.procs[p].hand();
            if (h != null && h.tx() == t) {
                s.procs[p] = s.procs[p].withHand(h.touch());
            }
        }
        s.wire.replaceAll(w -> w.kind() == Kind.TAKEOVER && w.tx() == t ? w.touch() : w);
    }
}
