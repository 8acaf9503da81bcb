package io.mongo2pc.internal;

import com.mongodb.client.model.Projections;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.internal.Participants.Result;
import org.bson.Document;

import java.time.Instant;
import java.util.List;

import static io.mongo2pc.internal.Participants.fenced;
import static io.mongo2pc.internal.Participants.sameId;

/**
 * Why an apply matched nothing, read from the document as it is now: done before (our marker is
 * there), the deadline passed, busy (another transaction's lock or markers, or too many markers),
 * or refused (the document is missing, the guard does not hold). Shared by the apply of every
 * kind that writes with a filter (increments, updates, deletes). Thread-safe.
 */
final class Refusals {
    private final int maxMarkers;

    Refusals(int maxMarkers) {
        this.maxMarkers = maxMarkers;
    }

    /** What to make of an apply of {@code op} for {@code txId} that matched nothing. */
    Result whyNotApplied(MongoCollection<Document> coll, Operation op, Object txId, Instant deadline) {
        Object id = op.document().id();
        // A projection keeps the read away from the embedded server's torn-read path.
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + op.document() + " does not exist");
        }
        List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
        if (markers.stream().anyMatch(m -> sameId(m, txId)) && EntryName.on(current, txId)) {
            return Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document()
                    + " is prepared by a two-round transaction with the same id " + txId);
        }
        if (markers.stream().anyMatch(m -> sameId(m, txId))) {
            return Result.DONE; // applied before (by us with the acknowledgement lost, or by a previous owner)
        }
        if (coll.find(fenced(new Document(Fields.ID, id), deadline)).projection(Projections.include(Fields.ID)).first() == null) {
            return Result.EXPIRED;
        }
        Document lock = current.get(Fields.LOCK, Document.class);
        if (lock != null && Inserts.isLate(current)) {
            Inserts.deleteLate(coll, id, current);
            return Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + op.document() + " does not exist");
        }
        if (lock != null) {
            return Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document() + " is taken by transaction " + lock.get("tx"));
        }
        if (op.exclusive() && !markers.isEmpty()) {
            return Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document() + " has pending transactions " + markers);
        }
        if (markers.size() >= maxMarkers) {
            return Result.busy(ReasonCode.TIMED_OUT, "document " + op.document() + " has " + markers.size()
                    + " pending transactions, the most allowed (maxMarkers)");
        }
        // Nothing above explains the refusal: the guard fails, or what refused the write (another
        // transaction's lock or markers) was gone by the time of the read above. Only a guard that
        // fails now cancels; otherwise the write is tried again.
        return byGuard(coll, op);
    }

    /**
     * A write of {@code op} refused for none of the other reasons: busy if its guard holds now (what
     * refused it was gone by the time of the read: try again), else refused by the guard.
     */
    static Result byGuard(MongoCollection<Document> coll, Operation op) {
        Document failing = guardFailing(coll, op);
        if (failing == null) {
            return Result.busy(ReasonCode.CONFLICT, "conflict: the write to " + op.document()
                    + " was refused while another transaction held it, and the guard holds now");
        }
        return refusedByGuard(op, failing);
    }

    /** The refusal of {@code op} by its guard, which fails on {@code seen} (the document as one read showed it). */
    static Result refusedByGuard(Operation op, Document seen) {
        return Result.refused(isFundsCheck(op) ? ReasonCode.INSUFFICIENT_FUNDS : ReasonCode.GUARD_FAILED,
                "guard " + op.guard().toJson() + " does not hold on " + op.document(), seen);
    }

    /**
     * The document of {@code op} as one read shows it, if its guard fails on it; null if the guard
     * holds (or the document is gone). One read, so that whoever judges the refusal (by committed
     * state, or by another open transaction's hold: docs/CONFLICTS.md) sees what refused it.
     */
    static Document guardFailing(MongoCollection<Document> coll, Operation op) {
        if (op.guard().isEmpty()) {
            return null;
        }
        Document filter = new Document(Fields.ID, op.document().id()).append("$nor", List.of(op.guard()));
        return coll.find(filter).projection(Projections.exclude("__none")).first();
    }

    /**
     * True for a debit guarded by its own funds check: an increment by {@code -x} of a field (an
     * increment, or an update that is only {@code $inc}) whose guard is {@code {field: {$gte: x}}}.
     */
    static boolean isFundsCheck(Operation op) {
        Object increments = op instanceof Operation.Increment inc ? inc.increments()
                : op instanceof Operation.Update update && update.update().size() == 1 ? update.update().get("$inc") : null;
        if (!(increments instanceof Document changes) || op.guard().size() != 1) {
            return false;
        }
        String field = op.guard().keySet().iterator().next();
        return op.guard().get(field) instanceof Document check && check.size() == 1
                && check.get("$gte") instanceof Number floor && changes.get(field) instanceof Number amount
                && Numbers.isFinite(floor) && Numbers.isFinite(amount)
                && Numbers.exact(amount).negate().compareTo(Numbers.exact(floor)) == 0;
    }
}
