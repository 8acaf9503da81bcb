package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.ProtocolServer.Result;
import io.mongo2pc.model.ProtocolState.Coordinator;
import io.mongo2pc.model.ProtocolState.Kind;
import io.mongo2pc.model.ProtocolState.Write;

import java.util.ArrayList;
import java.util.List;

import static io.mongo2pc.model.ProtocolModel.OLDER_THAN;
import static io.mongo2pc.model.ProtocolModel.OPS;

/**
 * The coordinator processes of {@link ProtocolModel}, by the rules of {@code Coordinator.drive}:
 * the writes a coordinator may compute next (an idle one: Starter, Recovery, Cancellation; an
 * owner: the next apply, release or undo, the state move, the renewal) and what it makes of the
 * server's reply. What the server makes of a write is {@link ProtocolServer}'s.
 */
final class ProtocolProcesses {

    private final ProtocolModel m;

    ProtocolProcesses(ProtocolModel model) {
        this.m = model;
    }

    /** The writes a coordinator with nothing in hand may compute next (Starter, Recovery, Cancellation). */
    List<Write> prepare(ProtocolState s, Coordinator c) {
        List<Write> ws = new ArrayList<>();
        if (!c.owner()) {
            // Starter.claimAndRun / Cancellation.cancel of a queued transaction.
            if (s.doc == TransactionState.INITIAL) {
                ws.add(Write.claim());
                ws.add(Write.cancelQueued());
            }
            // Recovery.recover / Cancellation.cancel: the stale query, then store.takeOver(seen, staleBefore).
            int wait = m.has(Bug.TAKEOVER_IGNORES_LEASE) ? OLDER_THAN : m.lease;
            boolean recoverable = s.doc == TransactionState.PENDING || s.doc == TransactionState.CANCELING
                    || (s.doc == TransactionState.APPLIED && !m.has(Bug.RECOVERY_SKIPS_APPLIED));
            if (recoverable && s.docAge >= wait) {
                ws.add(Write.takeover(s.doc, s.docEpoch, false));
                if (s.doc == TransactionState.PENDING) {
                    ws.add(Write.takeover(s.doc, s.docEpoch, true));
                }
            }
            return ws;
        }
        if (c.mustRenew()) {
            // participantWrite: EXPIRED -> renew(tx)
            ws.add(Write.renew(c.epoch(), c.state()));
            return ws;
        }
        switch (c.state()) {
            case PENDING -> {
                if (c.cancel()) {
                    ws.add(Write.move(c.epoch(), TransactionState.PENDING, TransactionState.CANCELING));
                } else if (c.pc() < OPS) {
                    ws.add(Write.participant(Kind.APPLY, c.pc(), c.left()));
                    ws.add(Write.renew(c.epoch(), c.state())); // renewIfDue
                } else {
                    ws.add(Write.move(c.epoch(), TransactionState.PENDING, TransactionState.APPLIED));
                }
            }
            case APPLIED -> {
                if (c.pc() < OPS) {
                    ws.add(Write.participant(Kind.RELEASE, c.pc(), c.left()));
                    ws.add(Write.renew(c.epoch(), c.state()));
                } else {
                    ws.add(Write.move(c.epoch(), TransactionState.APPLIED, TransactionState.DONE));
                }
            }
            case CANCELING -> {
                if (c.pc() < OPS) {
                    ws.add(Write.participant(Kind.UNDO, OPS - 1 - c.pc(), c.left()));
                    ws.add(Write.renew(c.epoch(), c.state()));
                } else {
                    ws.add(Write.move(c.epoch(), TransactionState.CANCELING, TransactionState.CANCELED));
                }
            }
            default -> throw new IllegalStateException("owner in " + c.state());
        }
        return ws;
    }

    /**
     * OwnerWrites.stamped: the deadline is the stored lastModified (returned by the write, or read back
     * after a lost acknowledgement) plus the lease, less the skew; kept as its distance from now.
     */
    private int deadline(ProtocolState doc) {
        int margin = m.has(Bug.NO_SKEW_MARGIN) ? 0 : m.skew;
        return Math.max(m.minLeft, m.lease - margin - doc.docAge);
    }

    /** What the coordinator does with the reply (Coordinator.drive, OwnerWrites.participantWrite / move / renew). */
    Coordinator reply(Coordinator c, Write w, Result r, ProtocolState after) {
        return switch (w.kind()) {
            // the claim and the takeover return the document: its epoch is now the owner's
            case CLAIM -> r == Result.OK ? Coordinator.owning(after.docEpoch, TransactionState.PENDING, false, deadline(after)) : Coordinator.IDLE;
            case CANCEL_QUEUED -> Coordinator.IDLE;
            case TAKEOVER -> r == Result.OK
                    ? Coordinator.owning(after.docEpoch, w.from(), w.cancel() && w.from() == TransactionState.PENDING, deadline(after)) : Coordinator.IDLE;
            case MOVE -> {
                if (r == Result.ASSUMED) {
                    yield w.to().isTerminal() ? Coordinator.IDLE
                            : new Coordinator(true, c.epoch(), w.to(), 0, c.left(), false, false, null); // no new stamp
                }
                if (r != Result.OK) {
                    yield Coordinator.IDLE; // LeaseLostException
                }
                yield w.to().isTerminal() ? Coordinator.IDLE : Coordinator.owning(c.epoch(), w.to(), false, deadline(after));
            }
            case RENEW -> r == Result.OK ? c.renewed(deadline(after)) : Coordinator.IDLE;
            case APPLY, UNDO, RELEASE -> switch (r) {
                case DONE -> c.next();
                case EXPIRED -> c.expired();
                case REFUSED -> c.refused();
                default -> throw new IllegalStateException(r.toString());
            };
        };
    }
}
