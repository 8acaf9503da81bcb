package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.Operation;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * The writes a transaction makes to its participant documents. Each is one atomic single-document
 * update that carries the transaction's marker in {@code pendingTransactions}, so repeating it
 * (after a lost acknowledgement, or by another process) has no further effect:
 * <ul>
 *   <li>apply: only where the marker is absent and the guard holds; adds the marker.</li>
 *   <li>undo: only where the marker is present; reverses the change and removes the marker.</li>
 *   <li>release: only where the marker is present; removes it (after the commit point).</li>
 * </ul>
 * Every write is also fenced by the owner's deadline, checked by the server on its own clock
 * ({@code $expr: {$lt: ["$$NOW", deadline]}}): a write sent by an owner paused past its lease
 * matches nothing, because no one takes a transaction over before that deadline has passed.
 * Thread-safe.
 */
final class Participants {
    /** What a participant write did. */
    enum Kind {
        /** In effect: this call or an earlier one (marker present) applied it; or undo/release done. */
        DONE,
        /** The operation cannot be applied: {@code reason} says why (guard, missing document). */
        REFUSED,
        /** The owner's deadline passed before the server ran the write: renew the lease or stop. */
        EXPIRED,
        /** The document carries as many markers as allowed: wait for other transactions to finish. */
        BUSY
    }

    record Result(Kind kind, String reason) {
        static final Result DONE = new Result(Kind.DONE, null);
        static final Result EXPIRED = new Result(Kind.EXPIRED, null);
    }

    private final Targets targets;
    private final int maxMarkers;

    Participants(Targets targets, int maxMarkers) {
        this.targets = targets;
        this.maxMarkers = maxMarkers;
    }

    /** Applies {@code op} for {@code txId} unless it already is. */
    Result apply(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
        if (op instanceof Operation.Increment inc) {
            Document filter = fenced(new Document(Fields.ID, id), deadline)
                    .append(Fields.MARKERS, new Document("$ne", txId))
                    // Bounded markers: a document never carries more than maxMarkers transactions.
                    .append(Fields.MARKERS + "." + (maxMarkers - 1), new Document("$exists", false));
            // The guard is checked in the same atomic write as the change: no overdraft can slip between.
            filter.putAll(inc.guard());
            Document update = new Document("$inc", inc.increments())
                    .append("$push", new Document(Fields.MARKERS, txId));
            if (coll.updateOne(filter, update).getMatchedCount() == 1) {
                return Result.DONE;
            }
            return whyNotApplied(coll, op, txId, deadline);
        }
        throw new IllegalArgumentException("unsupported operation " + op);
    }

    /** Reverses {@code op} if it is in effect for {@code txId}. */
    Result undo(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        if (op instanceof Operation.Increment inc) {
            Document negated = new Document();
            for (Map.Entry<String, Object> e : inc.increments().entrySet()) {
                negated.append(e.getKey(), Validation.negate((Number) e.getValue()));
            }
            return markerWrite(coll, op, txId, deadline,
                    new Document("$inc", negated).append("$pull", new Document(Fields.MARKERS, txId)));
        }
        throw new IllegalArgumentException("unsupported operation " + op);
    }

    /** Removes the marker of {@code txId} from the participant of {@code op}, if present. */
    Result release(Operation op, Object txId, Instant deadline) {
        return markerWrite(targets.collection(op.document()), op, txId, deadline,
                new Document("$pull", new Document(Fields.MARKERS, txId)));
    }

    private static Result markerWrite(MongoCollection<Document> coll, Operation op, Object txId, Instant deadline, Document update) {
        Document filter = fenced(new Document(Fields.ID, op.document().id()), deadline).append(Fields.MARKERS, txId);
        if (coll.updateOne(filter, update).getMatchedCount() == 1) {
            return Result.DONE;
        }
        // Matched nothing: either the marker is gone (done before) or the deadline passed first.
        Document current = coll.find(new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId))
                .projection(Projections.include(Fields.ID)).first();
        return current == null ? Result.DONE : Result.EXPIRED;
    }

    private Result whyNotApplied(MongoCollection<Document> coll, Operation op, Object txId, Instant deadline) {
        Object id = op.document().id();
        // A projection keeps the read away from the embedded server's torn-read path.
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return new Result(Kind.REFUSED, "document " + op.document() + " does not exist");
        }
        List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
        if (markers.stream().anyMatch(m -> sameId(m, txId))) {
            return Result.DONE; // applied before (by us with the acknowledgement lost, or by a previous owner)
        }
        if (coll.find(fenced(new Document(Fields.ID, id), deadline)).projection(Projections.include(Fields.ID)).first() == null) {
            return Result.EXPIRED;
        }
        if (markers.size() >= maxMarkers) {
            return new Result(Kind.BUSY, "document " + op.document() + " has " + markers.size()
                    + " pending transactions, the most allowed (maxMarkers)");
        }
        return new Result(Kind.REFUSED, "guard " + op.guard().toJson() + " does not hold on " + op.document());
    }

    /** Adds the server-side deadline check to {@code filter}. */
    static Document fenced(Document filter, Instant deadline) {
        return filter.append("$expr", new Document("$lt", List.of("$$NOW", Date.from(deadline))));
    }

    static boolean sameId(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return x.longValue() == y.longValue() && x.doubleValue() == y.doubleValue();
        }
        return a != null && a.equals(b);
    }
}
