package io.mongo2pc.internal;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.result.UpdateResult;
import io.mongo2pc.Operation;
import org.bson.Document;

import java.util.Map;

/**
 * The writes a transaction makes to its participant documents. Each is one atomic single-document
 * update that carries the transaction's marker in {@code pendingTransactions}, so repeating it
 * (after a lost acknowledgement or by another process) has no further effect:
 * <ul>
 *   <li>apply: only where the marker is absent and the guard holds; adds the marker.</li>
 *   <li>undo: only where the marker is present; reverses the change and removes the marker.</li>
 *   <li>release: only where the marker is present; removes it (after the commit point).</li>
 * </ul>
 * The marker alone cannot stop a late apply of an owner that was paused past its lease: once the
 * marker is removed the apply matches again. So an owner that took a transaction over first
 * leaves a fence ({@code finishedTransactions}) on each participant before it releases or undoes
 * it, and apply requires the fence to be absent. Fences are removed when the transaction is pruned.
 * Thread-safe.
 */
final class Participants {
    /** Why an operation could not be applied. */
    record Refusal(String reason) { }

    /**
     * The most transactions that may be in flight on one document (guarantee 7: a marker list
     * cannot grow without limit). One more is refused, which cancels its transaction.
     */
    static final int MAX_MARKERS = 100;

    private final Targets targets;

    Participants(Targets targets) {
        this.targets = targets;
    }

    /** Applies {@code op} for {@code txId} unless it already is; returns null or why it cannot be. */
    Refusal apply(Operation op, Object txId) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
        if (op instanceof Operation.Increment inc) {
            Document filter = new Document(Fields.ID, id).append(Fields.MARKERS, new Document("$ne", txId))
                    .append(Fields.FINISHED, new Document("$ne", txId))
                    .append(Fields.MARKERS + "." + (MAX_MARKERS - 1), new Document("$exists", false));
            // The guard is checked in the same atomic write as the change: no overdraft can slip between.
            filter.putAll(inc.guard());
            Document update = new Document("$inc", inc.increments())
                    .append("$push", new Document(Fields.MARKERS, txId));
            UpdateResult result;
            try {
                result = coll.updateOne(filter, update);
            } catch (MongoWriteException e) {
                // The server refused this change for good (e.g. $inc of a non-numeric field): nothing
                // was written, so it is a refusal that cancels the transaction, not a crash.
                return new Refusal("cannot apply " + inc.increments().toJson() + " to " + op.document() + ": "
                        + e.getError().getMessage());
            }
            if (result.getMatchedCount() == 1) {
                return null;
            }
            return whyNotApplied(coll, op, txId);
        }
        throw new IllegalArgumentException("unsupported operation " + op);
    }

    /** Reverses {@code op} if it is in effect for {@code txId}; true if this call reversed it. */
    boolean undo(Operation op, Object txId, boolean fence) {
        MongoCollection<Document> coll = targets.collection(op.document());
        if (fence) {
            // Fence first: an apply landing after it is refused, one landing before it is undone below.
            fence(coll, op, txId);
        }
        if (op instanceof Operation.Increment inc) {
            Document negated = new Document();
            for (Map.Entry<String, Object> e : inc.increments().entrySet()) {
                negated.append(e.getKey(), Validation.negate((Number) e.getValue()));
            }
            UpdateResult result = coll.updateOne(
                    new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId),
                    new Document("$inc", negated).append("$pull", new Document(Fields.MARKERS, txId)));
            return result.getModifiedCount() == 1;
        }
        throw new IllegalArgumentException("unsupported operation " + op);
    }

    /** Removes the marker of {@code txId} from the participant of {@code op}, if present. */
    void release(Operation op, Object txId, boolean fence) {
        if (fence) {
            fence(targets.collection(op.document()), op, txId);
        }
        targets.collection(op.document()).updateOne(
                new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId),
                new Document("$pull", new Document(Fields.MARKERS, txId)));
    }

    private static void fence(MongoCollection<Document> coll, Operation op, Object txId) {
        coll.updateOne(new Document(Fields.ID, op.document().id()), new Document("$addToSet", new Document(Fields.FINISHED, txId)));
    }

    /** Removes the fence of {@code txId} from the participant of {@code op}, if any (when the transaction is pruned). */
    void removeFence(Operation op, Object txId) {
        targets.collection(op.document()).updateOne(
                new Document(Fields.ID, op.document().id()).append(Fields.FINISHED, txId),
                new Document("$pull", new Document(Fields.FINISHED, txId)));
    }

    private static Refusal whyNotApplied(MongoCollection<Document> coll, Operation op, Object txId) {
        Object id = op.document().id();
        // A projection keeps the read away from the embedded server's torn-read path.
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return new Refusal("document " + op.document() + " does not exist");
        }
        if (current.getList(Fields.MARKERS, Object.class, java.util.List.of()).stream().anyMatch(m -> sameId(m, txId))) {
            return null; // applied before (by us with the acknowledgement lost, or by a previous owner)
        }
        int inFlight = current.getList(Fields.MARKERS, Object.class, java.util.List.of()).size();
        if (inFlight >= MAX_MARKERS) {
            return new Refusal(op.document() + " has " + inFlight + " transactions in flight (at most " + MAX_MARKERS
                    + "); retry once they finish or recovery has run");
        }
        if (current.getList(Fields.FINISHED, Object.class, java.util.List.of()).stream().anyMatch(m -> sameId(m, txId))) {
            return new Refusal("transaction " + txId + " was already finished on " + op.document() + " by a newer owner");
        }
        return new Refusal("guard " + op.guard().toJson() + " does not hold on " + op.document());
    }

    static boolean sameId(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return x.longValue() == y.longValue() && x.doubleValue() == y.doubleValue();
        }
        return a != null && a.equals(b);
    }
}
