package io.mongo2pc.internal.tworound;

import com.mongodb.client.model.Projections;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.Transition;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static io.mongo2pc.TransactionState.PENDING;

/**
 * The owner's decision after round 1 of the two-round commit (docs/TWO-ROUND.md, "The owner, step
 * by step"; docs/CONFLICTS.md): settles every prepare (a prepare in doubt waited out and sent again,
 * an expired one sent again after a renewal, markers of finished transactions resolved), settles a
 * conflict with another open transaction by {@link Priority} (waits for younger holders; yields to an
 * older one: undoes the round, waits for it, prepares again), then commits (every prepare in effect)
 * or cancels (a refusal by committed state, or a wait past {@code conflictTimeout}). Thread-safe:
 * each call drives the transaction its caller holds.
 */
final class TwoRoundDecision {
    /** How many times a refused prepare is sent again after resolving markers of finished transactions. */
    private static final int RESOLVES = 3;

    /** What settling one prepare found: a refusal that stands (or null: in effect), or the holders to yield to (or null). */
    private record Settled(Participants.Result refusal, List<Conflicts.Holder> yieldTo) {
        static final Settled IN_EFFECT = new Settled(null, null);
    }

    private final TwoRoundContext c;
    private final RoundOne roundOne;
    private final TwoRoundFinish finish;

    TwoRoundDecision(TwoRoundContext c, RoundOne roundOne, TwoRoundFinish finish) {
        this.c = c;
        this.roundOne = roundOne;
        this.finish = finish;
    }

    /**
     * Settles every prepare of the round ({@code sent}, updated as prepares are sent again), then
     * commits (all in effect) or cancels (a refusal that stands, once every prepare in doubt was
     * waited out). {@code roundOneUntil}: the deadline the document had to be inserted before (null
     * for a document not inserted by round 1).
     */
    void decide(OwnedTransaction tx, RoundOne.Sent[] sent, Instant roundOneUntil) {
        Participants.Result refusal = null;
        int refused = -1; // the operation whose refusal stands (none for a document inserted late)
        for (int i = 0; i < tx.ops.size(); i++) {
            Settled settled = settle(tx, sent, i, refusal, roundOneUntil);
            if (settled.yieldTo() != null) {
                refusal = yieldRound(tx, sent, i, settled.yieldTo(), roundOneUntil);
                if (refusal == null) {
                    i = -1; // prepared again: settle the new round from its first prepare
                    continue;
                }
                refused = late(refusal) ? -1 : i;
            } else if (refusal == null) {
                refusal = settled.refusal();
                refused = refusal == null || late(refusal) ? -1 : i;
            }
        }
        if (refusal == null) {
            // Only a document inserted before its deadline: one inserted later may have had its prepares
            // undone behind a tombstone by a resolver, and the tombstone pruned since (recovery cancels
            // such a document for the same reason).
            Document notLate = roundOneUntil == null ? null
                    : new Document(TwoRoundFields.INSERTED_AT, new Document("$lt", Date.from(roundOneUntil)));
            if (!c.writes().moveIf(tx, Transition.PENDING_TO_APPLIED, null, notLate)) {
                tx.reason = "its document was inserted after its deadline " + roundOneUntil;
                tx.code = ReasonCode.TIMED_OUT;
                c.writes().move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
            }
        } else {
            if (refused >= 0) {
                tx.refusedAt(refused, refusal);
            } else {
                tx.reason = refusal.reason();
                tx.code = refusal.code();
            }
            c.writes().move(tx, Transition.PENDING_TO_CANCELING, tx.reasonFields());
        }
    }

    /**
     * Settles prepare {@code i}: in effect, refused for good, or met an older holder. Once
     * {@code refusal} (of an earlier prepare) stands, a prepare in doubt is only waited out.
     */
    private Settled settle(OwnedTransaction tx, RoundOne.Sent[] sent, int i, Participants.Result refusal, Instant roundOneUntil) {
        int expired = 0;
        int resolves = 0;
        long waitingSince = 0;
        long backoffMs = 5;
        while (true) {
            RoundOne.Sent s = sent[i];
            if (s.inDoubt()) {
                // Retried only once no copy of it can land any more (a late copy could mark the
                // transaction again after its release).
                c.writesInDoubt().awaitPassedEverywhere(s.until(), tx.id);
                sent[i] = new RoundOne.Sent(Participants.Result.EXPIRED, false, s.until()); // waited out: nothing of it can land
                if (refusal != null) {
                    return Settled.IN_EFFECT;
                }
                if (!c.writes().renewUnlessInsertedLate(tx, false)) {
                    return new Settled(insertedLate(roundOneUntil), null);
                }
                sent[i] = roundOne.resend(tx, i, tx.deadline);
                continue;
            }
            Participants.Result r = s.result();
            if (refusal != null || r.kind() == Participants.Kind.DONE) {
                return Settled.IN_EFFECT;
            }
            if (r.kind() == Participants.Kind.EXPIRED) {
                if (++expired > 3) {
                    c.settings().metrics().leaseLost();
                    throw new LeaseLostException("transaction " + tx.id + ": a prepare missed the owner's deadline "
                            + expired + " times in a row; the lease " + c.settings().lease().toMillis()
                            + "ms is too short for the database's latency", tx.id, tx.state);
                }
                if (!c.writes().renewUnlessInsertedLate(tx, false)) {
                    return new Settled(insertedLate(roundOneUntil), null);
                }
            } else if ((r.kind() == Participants.Kind.BUSY || resolves < RESOLVES) && resolveOn(tx, i, r.seen()) > 0) {
                resolves++; // a finished transaction's marker or lock removed (a committed one rolled forward): try again
            } else {
                // Busy, or refused with nothing left to resolve: by an open transaction (a conflict), or for good.
                List<Conflicts.Holder> holders = Conflicts.holders(read(tx, i, r.seen()), tx.ops.get(i), r, tx.id, tx.nonce);
                if (holders.isEmpty() && r.kind() == Participants.Kind.REFUSED) {
                    return new Settled(r, null); // by committed state: the guard, a missing or an existing document
                }
                List<Conflicts.Holder> older = Conflicts.olderThan(tx.priority, holders);
                if (!older.isEmpty()) {
                    return new Settled(null, older);
                }
                // Only younger holders (they finish, or yield to us), or busy without a holder (a full
                // document, or the holder gone since the refusal): wait, then send it again.
                long now = c.settings().clock().nanoTime();
                waitingSince = waitingSince == 0 ? now : waitingSince;
                if (now - waitingSince > c.settings().conflictTimeout().toNanos()) {
                    c.settings().metrics().conflict();
                    return new Settled(holders.isEmpty() ? r : conflict(tx, i, holders, "younger"), null);
                }
                c.writes().waitBusy(backoffMs, tx.id, PENDING);
                backoffMs = Math.min(200, backoffMs * 2);
            }
            if (!c.writes().renewUnlessInsertedLate(tx, true)) {
                return new Settled(insertedLate(roundOneUntil), null);
            }
            sent[i] = roundOne.resend(tx, i, tx.deadline);
        }
    }

    /**
     * Prepare {@code i} met the holds of {@code older} transactions: gives way (docs/CONFLICTS.md).
     * Once no prepare of the round can still land (each answered, or in doubt and waited out), undoes
     * the round under the owner's deadline, waits until each of them finished, renews and sends
     * round 1 again into {@code sent}. Null then, or the refusal that ends the transaction (a wait past
     * {@code conflictTimeout}, a document inserted late), with nothing of it in effect.
     */
    private Participants.Result yieldRound(OwnedTransaction tx, RoundOne.Sent[] sent, int i, List<Conflicts.Holder> older,
                                           Instant roundOneUntil) {
        for (RoundOne.Sent s : sent) {
            if (s.inDoubt()) {
                c.writesInDoubt().awaitPassedEverywhere(s.until(), tx.id);
            }
        }
        if (!c.writes().renewUnlessInsertedLate(tx, true)) {
            return insertedLate(roundOneUntil);
        }
        finish.undoAll(tx, true);
        long since = c.settings().clock().nanoTime();
        long backoffMs = 5;
        List<Conflicts.Holder> waiting = older;
        while (true) {
            resolveOn(tx, i, null); // a committed holder rolled forward, an abandoned one undone
            Document doc = read(tx, i, null);
            waiting = waiting.stream().filter(h -> !finished(h, doc, tx)).toList();
            if (waiting.isEmpty()) {
                break;
            }
            if (c.settings().clock().nanoTime() - since > c.settings().conflictTimeout().toNanos()) {
                c.settings().metrics().conflict();
                return conflict(tx, i, waiting, "older");
            }
            c.writes().waitBusy(backoffMs, tx.id, PENDING);
            backoffMs = Math.min(200, backoffMs * 2);
            if (!c.writes().renewUnlessInsertedLate(tx, true)) {
                return insertedLate(roundOneUntil);
            }
        }
        if (!c.writes().renewUnlessInsertedLate(tx, false)) {
            return insertedLate(roundOneUntil);
        }
        RoundOne.Sent[] again = roundOne.send(tx, tx.deadline, null, new ArrayList<>());
        System.arraycopy(again, 0, sent, 0, sent.length);
        return null;
    }

    /**
     * True if {@code holder} finished: its document says committed or canceled; or it has none (its
     * owner in its round 1, or dead there) and no longer holds {@code doc}. A holder that is pending
     * (yielded itself, or waiting) has not: a transaction that prepared again as soon as the document
     * was free would take it back from an older one on its way to it.
     */
    private boolean finished(Conflicts.Holder holder, Document doc, OwnedTransaction tx) {
        Document stored = c.retrier().call("read holder", tx.id, tx.state, () -> c.store().find(holder.txId()));
        if (stored != null && (holder.nonce() == null || holder.nonce().equals(stored.get(TwoRoundFields.NONCE)))) {
            TransactionState state = LateCommit.stateOf(stored);
            return state == TransactionState.APPLIED || state == TransactionState.DONE || state == TransactionState.CANCELED;
        }
        return !Conflicts.holds(doc, holder);
    }

    /** The refusal of a wait for {@code holders} of prepare {@code i} that lasted past {@code conflictTimeout}. */
    private Participants.Result conflict(OwnedTransaction tx, int i, List<Conflicts.Holder> holders, String which) {
        return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + tx.ops.get(i).document() + " is held by "
                + which + " open transaction(s) " + Conflicts.describe(holders) + " for longer than conflictTimeout "
                + c.settings().conflictTimeout().toMillis() + "ms");
    }

    /** The refusal of a transaction whose document was inserted at or after {@code until}: it can only cancel. */
    private static Participants.Result insertedLate(Instant until) {
        return Participants.Result.refused(ReasonCode.TIMED_OUT, INSERTED_LATE + until);
    }

    private static final String INSERTED_LATE = "its document was inserted after its deadline ";

    /** True for {@link #insertedLate}'s refusal: the transaction's, not one operation's. */
    private static boolean late(Participants.Result refusal) {
        return refusal.code() == ReasonCode.TIMED_OUT && refusal.reason() != null && refusal.reason().startsWith(INSERTED_LATE);
    }

    /** The participant of operation {@code i} as {@code seen} (read to tell why a prepare was refused), or as read now. */
    private Document read(OwnedTransaction tx, int i, Document seen) {
        if (seen != null) {
            return seen;
        }
        var ref = tx.ops.get(i).document();
        return c.retrier().call("read participant", tx.id, tx.state, () -> c.targets().collection(ref)
                .find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first());
    }

    /**
     * Resolves the markers of other transactions on the participant of operation {@code i}, as
     * {@code seen} shows it (read just now to tell why a prepare was refused) or else as read now;
     * how many it removed.
     */
    private int resolveOn(OwnedTransaction tx, int i, Document seen) {
        var ref = tx.ops.get(i).document();
        var coll = c.targets().collection(ref);
        return c.retrier().call("resolve markers", tx.id, tx.state, () -> {
            Document doc = seen != null ? seen
                    : coll.find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first();
            return doc == null ? 0 : c.resolver().resolve(coll, doc, tx.id, tx.nonce);
        });
    }
}
