package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.Model.Step;
import io.mongo2pc.model.TwoRoundServer.Result;
import io.mongo2pc.model.TwoRoundState.Kind;
import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Phase;
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
import static io.mongo2pc.model.TwoRoundState.DOUBT;
import static io.mongo2pc.model.TwoRoundState.EXPIRED;
import static io.mongo2pc.model.TwoRoundState.MINE;
import static io.mongo2pc.model.TwoRoundState.NONE;
import static io.mongo2pc.model.TwoRoundState.NO_INSERT;
import static io.mongo2pc.model.TwoRoundState.REFUSED;
import static io.mongo2pc.model.TwoRoundState.REJECTED;
import static io.mongo2pc.model.TwoRoundState.RESEND;
import static io.mongo2pc.model.TwoRoundState.TAKEN;
import static io.mongo2pc.model.TwoRoundState.TOMB;
import static io.mongo2pc.model.TwoRoundState.WIRE;

/**
 * The processes of {@link TwoRoundModel}: owners (round 1, commit, finishing, canceling),
 * resolvers that meet a marker (a reader, a writer whose write was refused, the sweep) and
 * recovery (takeover of a stale transaction). Each step is one action of one process; what the
 * server makes of a write is {@link TwoRoundServer}'s.
 */
final class TwoRoundProcesses {
    private final TwoRoundModel m;
    private final TwoRoundServer server;
    private final CommitInsertOwner variant;
    private final TwoRoundResolvers resolvers;

    TwoRoundProcesses(TwoRoundModel model, TwoRoundServer server) {
        this.m = model;
        this.server = server;
        this.variant = new CommitInsertOwner(model, server, this);
        this.resolvers = new TwoRoundResolvers(model, server, this, variant);
    }

    void steps(TwoRoundState s, int p, List<Step<TwoRoundState>> out) {
        Proc c = s.procs[p];
        if (c.start() >= 0 && m.commitInsert) {
            variant.start(s, p, c.start(), out);
        } else if (c.start() >= 0) {
            int t = c.start();
            add(out, s, () -> "P" + p + " runs T" + (t + 1) + ": round 1 sends the insert and every prepare at once", n -> {
                int left = m.lease - m.skew;
                n.until[t] = left;
                Proc o = Proc.owning(t, 1, PENDING, left, WIRE, 0, false);
                n.procs[p] = o;
                n.wire.add(new Msg(Kind.INSERT, t, -1, left, 0, null, null, p, false, false));
                for (int i = 0; i < OPS; i++) {
                    n.wire.add(fenced(Kind.PREPARE, t, i, left, p));
                    n.procs[p] = n.procs[p].withSlot(i, WIRE);
                }
            });
        } else if (!c.owner()) {
            resolvers.idleSteps(s, p, c, out);
        } else {
            timeouts(s, p, c, out);
            ownerSteps(s, p, c, out);
        }
    }

    /**
     * The owner stops waiting for a write still on its way and treats it as in doubt: the write
     * becomes an orphan that may run at any later time (bounded by the model's budget of delays,
     * so the wire stays finite). A write that ran and whose answer was lost is {@link #lost}.
     */
    private void timeouts(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        if (s.delaysLeft == 0) {
            return;
        }
        for (int k = 0; k < s.wire.size(); k++) {
            Msg w = s.wire.get(k);
            if (w.proc() != p) {
                continue;
            }
            int at = k;
            add(out, s, () -> "P" + p + " gets no answer to " + w + " (still on its way): in doubt", n -> {
                n.wire.set(at, w.orphan());
                n.delaysLeft--;
                lost(n, p, w);
            });
        }
    }

    /** The owner will not hear the answer to {@code w}: the write's slot is in doubt. */
    void lost(TwoRoundState n, int p, Msg w) {
        Proc o = n.procs[p];
        n.procs[p] = switch (w.kind()) {
            case INSERT -> o.withIns(DOUBT);
            case COMMIT_INSERT -> o.withIns(TwoRoundState.COMMIT_DOUBT);
            case MOVE, RENEW -> o.withMove(o.move(), true);
            default -> o.withSlot(w.op(), DOUBT);
        };
    }

    private void ownerSteps(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        int t = c.tx();
        if (c.move() != null) {
            if (c.moveDoubt()) {
                Msg again = new Msg(c.move().kind(), t, -1, 0, c.epoch(), c.move().from(), c.move().to(), p, false, false);
                add(out, s, () -> "P" + p + " sends " + again + " again", n -> {
                    n.wire.add(again);
                    n.procs[p] = n.procs[p].withMove(again, false);
                });
            }
            return;
        }
        if (c.ins() == DOUBT) {
            add(out, s, () -> "P" + p + " sends insert(T" + (t + 1) + ") again", n -> {
                n.wire.add(new Msg(Kind.INSERT, t, -1, c.left(), 0, null, null, p, false, false));
                n.procs[p] = n.procs[p].withIns(WIRE);
            });
        }
        if (m.commitInsert && variant.steps(s, p, c, out)) {
            return;
        }
        switch (c.phase()) {
            case PREPARE -> prepareDecision(s, p, c, out);
            case UNDO -> sendAll(s, p, c, Kind.UNDO, out, CANCELING, CANCELED);
            case RESOLVER_UNDO -> sendAll(s, p, c, Kind.RESOLVER_UNDO, out, null, null);
            case RELEASE -> sendAll(s, p, c, Kind.RELEASE, out, APPLIED, DONE);
        }
    }

    /** After round 1 (or a takeover of a pending transaction): commit, resend, resolve, or cancel. */
    private void prepareDecision(TwoRoundState s, int p, Proc c, List<Step<TwoRoundState>> out) {
        int t = c.tx();
        boolean unsettled = c.anySlot(WIRE) || c.anySlot(DOUBT) && c.left() > -m.skew;
        if (c.ins() == TOMB) {
            if (!unsettled || m.has(TwoRoundBug.UNDO_BEFORE_PREPARES_SETTLED)) {
                add(out, s, () -> "P" + p + " finds T" + (t + 1) + " tombstoned: undoes its prepares by the resolver's rules", n -> {
                    Proc o = n.procs[p];
                    stop(n, p);
                    n.procs[p] = o.withPhase(Phase.RESOLVER_UNDO);
                });
            }
            return;
        }
        boolean noDoc = c.ins() == TwoRoundState.NO_DOC; // the commit-insert variant, before its commit
        if (c.ins() != MINE && c.ins() != NO_INSERT && !noDoc) {
            return; // nothing can change the document before the owner knows it is there
        }
        if (noDoc && m.has(TwoRoundBug.FALLBACK_AT_ANY_PREPARE_NOT_IN_EFFECT) && !c.cancel()) {
            // As coded (TwoRound.run): once every prepare is answered or in doubt, commit or fall back.
            if (!c.anySlot(WIRE)) {
                if (c.allSlots(TwoRoundState.DONE)) {
                    commit(s, p, c, true, out);
                } else {
                    variant.fallBack(s, p, c, out);
                }
            }
            return;
        }
        boolean anyOpen = c.anySlot(NONE) || c.anySlot(RESEND) || c.anySlot(EXPIRED) || c.anySlot(REFUSED) || c.anySlot(TAKEN)
                || c.anySlot(REJECTED);
        if (m.has(TwoRoundBug.COMMIT_BEFORE_EVERY_PREPARE_ACKNOWLEDGED) && !anyOpen && !c.cancel() && !c.allSlots(TwoRoundState.DONE)) {
            commit(s, p, c, noDoc, out);
        }
        // The server refused an update's change (round 1b): a refusal before the commit point.
        boolean refusedForGood = c.anySlot(REJECTED);
        for (int i = 0; i < OPS && !c.cancel(); i++) {
            if (c.slot(i) == REFUSED) {
                int op = i;
                int a = ACC[t][i];
                List<TwoRoundResolvers.Resolution> fixes = resolvers.resolutions(s, a, t);
                for (TwoRoundResolvers.Resolution r : fixes) {
                    add(out, s, () -> "P" + p + " (writer refused on " + ACCOUNT[a] + ") " + r.label() + ", then will prepare again", n -> {
                        r.apply().accept(n);
                        n.procs[p] = n.procs[p].withSlot(op, RESEND);
                    });
                }
                boolean guard = m.guardHolds(s, t, i);
                if (fixes.isEmpty() && guard) {
                    add(out, s, () -> "P" + p + " finds the guard on " + ACCOUNT[a] + " holds now: will prepare again",
                            n -> n.procs[p] = n.procs[p].withSlot(op, RESEND));
                }
                if ((!fixes.isEmpty() || guard) && !m.blocked(s, t, i)) {
                    return;
                }
                // Refused for good, or held by another transaction's lock or markers: the owner may
                // also give up (the conflict timeout) and cancel.
                refusedForGood = true;
                break;
            }
        }
        if (c.cancel() || refusedForGood) {
            if (noDoc && (!unsettled || m.has(TwoRoundBug.CANCEL_WITHOUT_DOCUMENT_BEFORE_SETTLED))) {
                variant.cancel(s, p, c, out);
            } else if (!noDoc && (!unsettled || m.has(TwoRoundBug.UNDO_BEFORE_PREPARES_SETTLED))) {
                send(s, p, c, new Msg(Kind.MOVE, t, -1, 0, c.epoch(), PENDING, CANCELING, p, false, false), out);
            }
            return;
        }
        if (noDoc && c.anySlot(DOUBT) && c.left() > 0) {
            variant.fallBack(s, p, c, out); // or wait it out, then cancel without a document
        }
        boolean waitForDoubt = c.anySlot(DOUBT) && c.left() > -m.skew && !m.has(TwoRoundBug.IN_DOUBT_PREPARE_RESENT_AT_ONCE);
        if (c.anySlot(WIRE) || waitForDoubt) {
            return;
        }
        if (c.allSlots(TwoRoundState.DONE)) {
            commit(s, p, c, noDoc, out);
            return;
        }
        if (c.left() <= 0 && noDoc) {
            variant.cancel(s, p, c, out); // past its deadline without a document: nothing to renew
            return;
        }
        if (c.left() <= 0) {
            // Every prepare in doubt has been waited out (its deadline, the one being renewed, +
            // maxClockSkew): it is settled, to be sent again under the new deadline.
            Proc settled = c;
            for (int i = 0; i < OPS; i++) {
                settled = settled.slot(i) == DOUBT ? settled.withSlot(i, RESEND) : settled;
            }
            send(s, p, settled, new Msg(Kind.RENEW, t, -1, 0, c.epoch(), PENDING, null, p, false, false), out);
            return;
        }
        if (c.anySlot(TAKEN)) {
            sendSlots(s, p, c, Kind.CHANGE, out, TAKEN); // round 1b: the update's document is taken, change it
        }
        sendSlots(s, p, c, Kind.PREPARE, out, NONE, EXPIRED, DOUBT, RESEND);
    }

    private void commit(TwoRoundState s, int p, Proc c, boolean noDoc, List<Step<TwoRoundState>> out) {
        if (noDoc) {
            variant.commit(s, p, c, out);
        } else {
            send(s, p, c, new Msg(Kind.MOVE, c.tx(), -1, 0, c.epoch(), PENDING, APPLIED, p, false, false), out);
        }
    }

    /**
     * Undo (fenced), resolver's undo or release of every operation at once; then the state change
     * {@code from -> to} (none for the resolver's undo: the tombstone is terminal already).
     */
    private void sendAll(TwoRoundState s, int p, Proc c, Kind kind, List<Step<TwoRoundState>> out,
                         TransactionState from, TransactionState to) {
        if (c.anySlot(WIRE)) {
            return;
        }
        if (c.allSlots(TwoRoundState.DONE)) {
            if (from == null) {
                add(out, s, () -> "P" + p + " has undone T" + (c.tx() + 1) + "'s prepares: reports it "
                        + (c.cancel() ? "in doubt" : "canceled"), n -> {
                    if (!c.cancel()) {
                        tell(n, c.tx(), TwoRoundState.TOLD_CANCELED);
                    }
                    stop(n, p);
                });
            } else {
                send(s, p, c, new Msg(Kind.MOVE, c.tx(), -1, 0, c.epoch(), from, to, p, false, false), out);
            }
            return;
        }
        if (kind == Kind.UNDO && c.left() <= 0) {
            send(s, p, c, new Msg(Kind.RENEW, c.tx(), -1, 0, c.epoch(), c.state(), null, p, false, false), out);
            return;
        }
        sendSlots(s, p, c, kind, out, NONE, EXPIRED, DOUBT);
    }

    private void sendSlots(TwoRoundState s, int p, Proc c, Kind kind, List<Step<TwoRoundState>> out, int... statuses) {
        List<Msg> batch = new ArrayList<>();
        for (int i = 0; i < OPS; i++) {
            for (int st : statuses) {
                if (c.slot(i) == st) {
                    batch.add(kind == Kind.RELEASE || kind == Kind.RESOLVER_UNDO
                            ? new Msg(kind, c.tx(), i, 0, 0, null, null, p, false, false) : fenced(kind, c.tx(), i, c.left(), p));
                }
            }
        }
        if (batch.isEmpty()) {
            return;
        }
        add(out, s, () -> "P" + p + " sends " + batch, n -> {
            for (Msg w : batch) {
                n.wire.add(w);
                n.procs[p] = n.procs[p].withSlot(w.op(), WIRE);
            }
        });
    }

    private void send(TwoRoundState s, int p, Proc c, Msg w, List<Step<TwoRoundState>> out) {
        add(out, s, () -> "P" + p + " sends " + w, n -> {
            n.wire.add(w);
            n.procs[p] = c.withMove(w, false);
        });
    }

    private static Msg fenced(Kind kind, int t, int i, int left, int p) {
        return new Msg(kind, t, i, left, 0, null, null, p, false, false);
    }

    /** The server's answer reaches the process that waits for it. */
    void reply(TwoRoundState n, int p, Msg w, Result r) {
        Proc c = n.procs[p];
        switch (w.kind()) {
            case INSERT -> {
                if (r == Result.LOST) {
                    stop(n, p); // taken over after its insert landed: the new owner drives it
                } else {
                    n.procs[p] = c.withIns(r == Result.MINE ? MINE : TOMB);
                }
            }
            case PREPARE -> n.procs[p] = c.withSlot(w.op(), r == Result.DONE ? TwoRoundState.DONE : r == Result.TAKEN ? TAKEN
                    : r == Result.REFUSED ? REFUSED : EXPIRED);
            case CHANGE -> n.procs[p] = c.withSlot(w.op(), r == Result.DONE ? TwoRoundState.DONE : r == Result.REFUSED ? REJECTED : EXPIRED);
            case UNDO -> n.procs[p] = c.withSlot(w.op(), r == Result.DONE ? TwoRoundState.DONE : EXPIRED);
            case RESOLVER_UNDO, RELEASE -> n.procs[p] = c.withSlot(w.op(), TwoRoundState.DONE);
            case COMMIT_INSERT -> {
                if (r == Result.LOST) {
                    stop(n, p); // taken over since (its answer was lost before): the new owner drives it
                } else {
                    n.procs[p] = c.withIns(r == Result.TOMB ? TOMB
                            : c.ins() == TwoRoundState.COMMIT_AGAIN_WIRE ? TwoRoundState.COMMIT_AGAIN_MINE : TwoRoundState.COMMIT_MINE);
                }
            }
            case MOVE -> {
                if (r == Result.OK && w.to() == APPLIED && c.ins() == MINE) {
                    tell(n, c.tx(), TwoRoundState.TOLD_COMMITTED); // the caller's owner (recovery tells no caller)
                }
                if (r != Result.OK) {
                    stop(n, p); // LeaseLostException
                } else if (w.to().isTerminal()) {
                    stop(n, p);
                } else {
                    stop(n, p); // answers to writes of the previous phase (only a bug leaves any) are not waited for
                    n.procs[p] = Proc.owning(c.tx(), c.epoch(), w.to(), m.deadline(n, c.tx()), NO_INSERT, 0, false);
                }
            }
            case RENEW -> n.procs[p] = r == Result.OK ? c.withLeft(m.deadline(n, c.tx())).withMove(null, false) : null;
            case TAKEOVER -> throw new IllegalStateException("a takeover's answer is read in the same step");
        }
        if (n.procs[p] == null) {
            stop(n, p);
        }
    }

    /** What the owner tells its caller (a ghost; recorded in the commit-insert variant's runs). */
    private void tell(TwoRoundState n, int t, int what) {
        if (m.commitInsert) {
            n.told[t] |= what;
        }
    }

    /** The process stops driving its transaction; writes it still waits for become orphans. */
    static void stop(TwoRoundState n, int p) {
        n.procs[p] = Proc.IDLE;
        n.wire.replaceAll(w -> w.proc() == p ? w.orphan() : w);
    }

    void add(List<Step<TwoRoundState>> out, TwoRoundState s, java.util.function.Supplier<String> label,
                     Consumer<TwoRoundState> change) {
        TwoRoundState n = s.copy();
        change.accept(n);
        out.add(new Step<>(label, m.normalize(n)));
    }
}
