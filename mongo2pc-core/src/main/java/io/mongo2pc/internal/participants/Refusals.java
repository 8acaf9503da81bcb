package io.mongo2pc.internal.participants;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.Values;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Participants.Result;
import org.bson.Document;

import java.time.Instant;
import java.util.List;

import static io.mongo2pc.internal.participants.Participants.fenced;
import static io.mongo2pc.internal.format.Ids.sameId;

/**
 * Why an apply matched nothing, read from the document as it is now: done before (our marker is
 * there), the deadline passed, busy (another transaction's lock or markers, or too many markers),
 * or refused (the document is missing, the guard does not hold). Shared by the apply of every
 * kind that writes with a filter (increments, updates, deletes). Thread-safe.
 * Public for the state package, as are the members they use.
 */
public final class Refusals {
    /** The tutorial's field of an account's money. */
    private static final String BALANCE = "balance";
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
     * The refusal of {@code op} by its guard, which fails on {@code current} (the document as one
     * read showed it), in words: a debit's funds check says what the document has and what the debit
     * needs ("bob has balance 4000, the debit needs 5000", {@link ReasonCode#INSUFFICIENT_FUNDS}); any
     * other guard is shown with the values its fields hold ({@link ReasonCode#GUARD_FAILED}).
     */
    static Result refusedByGuard(Operation op, Document current) {
        if (isFundsCheck(op)) {
            String field = op.guard().keySet().iterator().next();
            Number floor = (Number) op.guard().get(field, Document.class).get("$gte");
            Object has = current == null ? null : fieldValue(current, field);
            return Result.refused(ReasonCode.INSUFFICIENT_FUNDS, op.document().id() + " has "
                    + (has == null && current != null ? "no " + field : has == null ? "less than that in " + field
                    : field + " " + Values.plain(has)) + ", the debit needs " + Values.plain(floor), current);
        }
        StringBuilder holds = new StringBuilder();
        if (current != null) {
            for (String field : op.guard().keySet()) {
                if (!field.startsWith("$")) {
                    Object value = fieldValue(current, field);
                    holds.append(holds.length() == 0 ? ": " : ", ").append(field)
                            .append(value == null && !hasField(current, field) ? " is missing" : " is " + Values.plain(value));
                }
            }
        }
        return Result.refused(ReasonCode.GUARD_FAILED, "guard " + Values.plain(op.guard()) + " does not hold on "
                + op.document() + holds, current);
    }

    /** The value at a dotted path of {@code doc}, or null. */
    public static Object fieldValue(Document doc, String path) {
        Object value = doc;
        for (String part : path.split("\\.")) {
            if (!(value instanceof Document d)) {
                return null;
            }
            value = d.get(part);
        }
        return value;
    }

    private static boolean hasField(Document doc, String path) {
        int dot = path.lastIndexOf('.');
        Object parent = dot < 0 ? doc : fieldValue(doc, path.substring(0, dot));
        return parent instanceof Document d && d.containsKey(path.substring(dot + 1));
    }

    /**
     * True for a debit guarded by its own funds check: an increment of a field by {@code -x} (an
     * increment, or an update that is only {@code $inc}) under the guard {@code {field: {$gte: x}}},
     * of money: the operation is flagged {@link Operation.Flag#DEBIT} (the bank's are), or the field
     * is the tutorial's account {@code balance}. A stock count's guard is a guard ({@code GUARD_FAILED}).
     */
    static boolean isFundsCheck(Operation op) {
        Object increments = op instanceof Operation.Increment inc ? inc.increments()
                : op instanceof Operation.Update update && update.update().size() == 1 ? update.update().get("$inc") : null;
        if (!(increments instanceof Document changes) || op.guard().size() != 1) {
            return false;
        }
        String field = op.guard().keySet().iterator().next();
        if (!op.flags().contains(Operation.Flag.DEBIT) && !field.equals(BALANCE)) {
            return false;
        }
        return op.guard().get(field) instanceof Document check && check.size() == 1
                && check.get("$gte") instanceof Number floor && changes.get(field) instanceof Number amount
                && Numbers.isFinite(floor) && Numbers.isFinite(amount)
                && Numbers.exact(amount).negate().compareTo(Numbers.exact(floor)) == 0;
    }
}
