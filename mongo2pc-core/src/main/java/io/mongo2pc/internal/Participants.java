package io.mongo2pc.internal;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
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

    /** What a write did; a refusal or a wait says why, in words and as a code. */
    record Result(Kind kind, String reason, ReasonCode code) {
        static final Result DONE = new Result(Kind.DONE, null, null);
        static final Result EXPIRED = new Result(Kind.EXPIRED, null, null);

        static Result refused(ReasonCode code, String reason) {
            return new Result(Kind.REFUSED, reason, code);
        }

        static Result busy(ReasonCode code, String reason) {
            return new Result(Kind.BUSY, reason, code);
        }
    }

    private final Targets targets;
    private final int maxMarkers;
    /** "database.collection" of the transactions collection, written into locks for readers. */
    private final String coordinator;

    Participants(Targets targets, int maxMarkers, String coordinator) {
        this.targets = targets;
        this.maxMarkers = maxMarkers;
        this.coordinator = coordinator;
    }

    /** "database.collection" of the transactions collection. */
    String coordinator() {
        return coordinator;
    }

    /** Applies {@code op} for {@code txId} unless it already is. */
    Result apply(Operation op, Object txId, Instant deadline) {
        try {
            return applyOnce(op, txId, deadline);
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            // The server refused this change for good (e.g. $inc of a text field, a replacement too
            // large): nothing was written, so it is a refusal that cancels the transaction, not a crash.
            return Result.refused(ReasonCode.GUARD_FAILED, "cannot apply " + OperationCodec.kind(op) + " to " + op.document() + ": "
                    + e.getMessage());
        }
    }

    /** Releases the markers of increments that all live in one collection, in one request; true if all matched. */
    boolean releaseIncrements(List<Operation.Increment> ops, Object txId, Instant deadline) {
        return targets.combiner(ops.get(0).document()).write(releaseWrites(ops, txId, deadline));
    }

    /** The release writes of increments: each matches only where the marker is, under the deadline. */
    static List<UpdateOneModel<Document>> releaseWrites(List<Operation.Increment> ops, Object txId, Instant deadline) {
        List<UpdateOneModel<Document>> writes = new ArrayList<>(ops.size());
        for (Operation.Increment inc : ops) {
            writes.add(new UpdateOneModel<>(
                    EntryName.withoutEntry(fenced(new Document(Fields.ID, inc.document().id()), deadline).append(Fields.MARKERS, txId), txId),
                    new Document("$pull", new Document(Fields.MARKERS, txId))));
        }
        return writes;
    }

    /** True if every operation is in effect for {@code txId} (its marker is on its document). */
    boolean allApplied(List<Operation> ops, Object txId) {
        for (Operation op : ops) {
            if (targets.collection(op.document()).find(EntryName.withoutEntry(new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId), txId))
                    .projection(Projections.include(Fields.ID)).first() == null) {
                return false;
            }
        }
        return !ops.isEmpty();
    }

    private Document incrementFilter(Operation.Increment inc, Object txId, Instant deadline) {
        Document filter = fenced(new Document(Fields.ID, inc.document().id()), deadline)
                .append(Fields.MARKERS, new Document("$ne", txId))
                // Bounded markers: a document never carries more than maxMarkers transactions.
                .append(Fields.MARKERS + "." + (maxMarkers - 1), new Document("$exists", false));
        // The guard is checked in the same atomic write as the change: no overdraft can slip between.
        filter.putAll(inc.guard());
        return filter.append(Fields.LOCK, new Document("$exists", false));
    }

    private static Document incrementUpdate(Operation.Increment inc, Object txId) {
        return new Document("$inc", inc.increments()).append("$push", new Document(Fields.MARKERS, txId));
    }

    private Result applyOnce(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
        if (op instanceof Operation.Increment inc) {
            Document filter = incrementFilter(inc, txId, deadline);
            Document update = incrementUpdate(inc, txId);
            // Sent with other transactions' writes; if that answer is not known, again on its own
            // (idempotent: the marker says if the first one took effect).
            WriteCombiner.Answer answer = targets.combiner(op.document()).answer(new UpdateOneModel<>(filter, update));
            if (answer == WriteCombiner.Answer.IN_DOUBT) {
                throw new WriteInDoubtException("the combined request with the apply to " + op.document()
                        + " failed without an answer; it may still take effect");
            }
            if (answer == WriteCombiner.Answer.MATCHED || coll.updateOne(filter, update).getMatchedCount() == 1) {
                return Result.DONE;
            }
            return whyNotApplied(coll, op, txId, deadline);
        }
        if (op instanceof Operation.Insert insert) {
            return Inserts.apply(coll, insert, txId, deadline, coordinator);
        }
        // Update and delete first take the document: no markers of others, no lock, guard holds.
        Document take = fenced(new Document(Fields.ID, id), deadline)
                .append(Fields.MARKERS + ".0", new Document("$exists", false))
                .append(Fields.LOCK, new Document("$exists", false));
        take.putAll(op.guard());
        Document lock = new Document("tx", txId).append("kind", OperationCodec.kind(op)).append("c", coordinator);
        // A document without a marker array is taken saying so, so that its release and undo
        // leave none behind (the user's schema stays as it was); one with [] keeps it.
        Document before = take(coll, new Document(take).append(Fields.MARKERS, new Document("$exists", false)),
                new Document(lock).append("noMarkers", true), txId);
        if (before == null) {
            before = take(coll, take, lock, txId);
        }
        if (before == null) {
            Result why = whyNotApplied(coll, op, txId, deadline);
            if (why.kind() != Kind.DONE) {
                return why;
            }
            // Taken by us before (acknowledgement lost, or a previous owner): changed already?
            before = coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.exclude("__none")).first();
            if (before == null || op instanceof Operation.Delete || before.get(Fields.LOCK, Document.class).containsKey("undo")) {
                return Result.DONE;
            }
            // This copy is from after the take: without our own marker it is the document as it was
            // (the take required no markers; the lock says if there was no marker array at all).
            before = Boolean.TRUE.equals(before.get(Fields.LOCK, Document.class).get("noMarkers"))
                    ? withoutMarkers(strip(before)) : withoutMarker(strip(before), txId);
        }
        if (op instanceof Operation.Delete) {
            return Result.DONE; // the document stays, taken, until release deletes it
        }
        return applyUpdate(coll, (Operation.Update) op, txId, deadline, strip(before));
    }

    private static Document take(MongoCollection<Document> coll, Document filter, Document lock, Object txId) {
        return coll.findOneAndUpdate(filter,
                new Document("$set", new Document(Fields.LOCK, lock)).append("$push", new Document(Fields.MARKERS, txId)),
                new FindOneAndUpdateOptions().projection(Projections.exclude("__none"))
                        .returnDocument(ReturnDocument.BEFORE));
    }

    /**
     * Changes a taken document and stores its before-image on it in the same atomic write, so the
     * undo is durable before the change is in effect.
     */
    private Result applyUpdate(MongoCollection<Document> coll, Operation.Update op, Object txId, Instant deadline, Document beforeImage) {
        Object id = op.document().id();
        Document filter = fenced(Exclusive.tutorialLocked(id, txId), deadline)
                .append(Fields.LOCK_UNDO, new Document("$exists", false));
        Document lock = new Document("tx", txId).append("kind", "update").append("c", coordinator).append("undo", beforeImage);
        if (!beforeImage.containsKey(Fields.MARKERS)) {
            lock.append("noMarkers", true);
        }
        long matched;
        if (op.isReplacement()) {
            Document replacement = new Document(Fields.ID, id);
            replacement.putAll(op.update());
            replacement.put(Fields.ID, id);
            replacement.append(Fields.MARKERS, List.of(txId)).append(Fields.LOCK, lock);
            matched = coll.replaceOne(filter, replacement).getMatchedCount();
        } else {
            Document update = new Document();
            op.update().forEach((operator, fields) -> update.append(operator, new Document((Document) fields)));
            Document set = (Document) update.computeIfAbsent("$set", k -> new Document());
            set.append(Fields.LOCK_UNDO, beforeImage);
            matched = coll.updateOne(filter, update).getMatchedCount();
        }
        if (matched == 1) {
            return Result.DONE;
        }
        Document current = coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.include(Fields.LOCK_UNDO)).first();
        if (current == null || current.get(Fields.LOCK, Document.class).containsKey("undo")) {
            return Result.DONE;
        }
        return Result.EXPIRED;
    }

    /** A document as the user wrote it: without the library's lock (the markers stay as they were). */
    static Document strip(Document doc) {
        Document copy = new Document(doc);
        copy.remove(Fields.LOCK);
        copy.remove(Fields.ID);
        return copy;
    }

    private static Document withoutMarkers(Document doc) {
        doc.remove(Fields.MARKERS);
        return doc;
    }

    /** {@code doc} with {@code txId} taken out of its markers. */
    private static Document withoutMarker(Document doc, Object txId) {
        Object markers = doc.get(Fields.MARKERS);
        if (markers instanceof List<?> list) {
            List<Object> others = new ArrayList<>(list);
            others.removeIf(marker -> sameId(marker, txId));
            doc.put(Fields.MARKERS, others);
        }
        return doc;
    }

    /** Reverses {@code op} if it is in effect for {@code txId}. */
    Result undo(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        if (op instanceof Operation.Increment inc) {
            Document negated = new Document();
            for (Map.Entry<String, Object> e : inc.increments().entrySet()) {
                negated.append(e.getKey(), Numbers.negate((Number) e.getValue()));
            }
            return markerWrite(coll, op, txId, deadline,
                    new Document("$inc", negated).append("$pull", new Document(Fields.MARKERS, txId)));
        }
        Object id = op.document().id();
        Document taken = coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.exclude("__none")).first();
        if (taken == null) {
            return Result.DONE; // never taken, or undone before
        }
        Document filter = fenced(Exclusive.tutorialLocked(id, txId), deadline);
        long matched;
        Document undo = taken.get(Fields.LOCK, Document.class).get("undo", Document.class);
        if (op instanceof Operation.Insert) {
            matched = coll.deleteOne(filter).getDeletedCount();
        } else if (undo != null) {
            Document restored = new Document(Fields.ID, id);
            restored.putAll(undo);
            restored.remove(Fields.LOCK);
            matched = coll.replaceOne(filter, restored).getMatchedCount();
        } else {
            matched = coll.updateOne(filter, unlock(txId, Boolean.TRUE.equals(taken.get(Fields.LOCK, Document.class)
                    .get("noMarkers")))).getMatchedCount();
        }
        return matched == 1 ? Result.DONE : stillTaken(coll, id, txId);
    }

    /** Removes the marker (and lock) of {@code txId} from the participant of {@code op}; a delete happens here. */
    Result release(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        if (op instanceof Operation.Increment) {
            return markerWrite(coll, op, txId, deadline, new Document("$pull", new Document(Fields.MARKERS, txId)));
        }
        Object id = op.document().id();
        Document filter = fenced(Exclusive.tutorialLocked(id, txId), deadline);
        long matched = op instanceof Operation.Delete
                ? coll.deleteOne(filter).getDeletedCount()
                : coll.updateOne(new Document(filter).append(Fields.LOCK_NO_MARKERS, true), unlock(txId, true)).getMatchedCount();
        if (matched == 0 && !(op instanceof Operation.Delete)) {
            matched = coll.updateOne(filter, unlock(txId, false)).getMatchedCount(); // it had a marker array: keep it
        }
        return matched == 1 ? Result.DONE : stillTaken(coll, id, txId);
    }

    /**
     * Removes the lock; an exclusive operation was the only transaction on the document, so no
     * marker remains: the marker array goes too when the document had none before it was taken.
     */
    private static Document unlock(Object txId, boolean noMarkers) {
        return noMarkers ? new Document("$unset", new Document(Fields.LOCK, "").append(Fields.MARKERS, ""))
                : new Document("$unset", new Document(Fields.LOCK, "")).append("$pull", new Document(Fields.MARKERS, txId));
    }

    private static Result stillTaken(MongoCollection<Document> coll, Object id, Object txId) {
        Document current = coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.include(Fields.ID)).first();
        return current == null ? Result.DONE : Result.EXPIRED;
    }

    private static Result markerWrite(MongoCollection<Document> coll, Operation op, Object txId, Instant deadline, Document update) {
        Document filter = EntryName.withoutEntry(fenced(new Document(Fields.ID, op.document().id()), deadline).append(Fields.MARKERS, txId), txId);
        if (coll.updateOne(filter, update).getMatchedCount() == 1) {
            return Result.DONE;
        }
        // Matched nothing: either the marker is gone (done before) or the deadline passed first.
        Document current = coll.find(EntryName.withoutEntry(new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId), txId))
                .projection(Projections.include(Fields.ID)).first();
        return current == null ? Result.DONE : Result.EXPIRED;
    }

    private Result whyNotApplied(MongoCollection<Document> coll, Operation op, Object txId, Instant deadline) {
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
        Document guardHolds = new Document(Fields.ID, id);
        guardHolds.putAll(op.guard());
        if (coll.find(guardHolds).projection(Projections.include(Fields.ID)).first() != null) {
            return Result.busy(ReasonCode.CONFLICT, "conflict: the write to " + op.document()
                    + " was refused while another transaction held it, and the guard holds now");
        }
        return Result.refused(isFundsCheck(op) ? ReasonCode.INSUFFICIENT_FUNDS : ReasonCode.GUARD_FAILED,
                "guard " + op.guard().toJson() + " does not hold on " + op.document());
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
