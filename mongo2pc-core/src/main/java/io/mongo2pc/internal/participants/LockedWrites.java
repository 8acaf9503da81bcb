package io.mongo2pc.internal.participants;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.Operation;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.participants.Participants.Kind;
import io.mongo2pc.internal.participants.Participants.Result;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static io.mongo2pc.internal.participants.Participants.fenced;

/**
 * The writes of an update and a delete (see {@link Participants}): the document is first taken
 * under the {@code _m2pc} lock (no other transaction's marker, no lock, the guard holds), so it
 * is the only transaction on it; an update then changes it and stores its before-image in the
 * lock in the same write, adding 1 to its version ({@link Versions}). The undo puts the before-image back (or only unlocks); the release
 * unlocks, or deletes the document for a delete. The unlock and the check that a document is
 * still taken serve an insert's writes too ({@link Inserts}). Thread-safe.
 * Public for the interactive package, as are the members they use.
 */
public final class LockedWrites {
    private final Targets targets;
    /** "database.collection" of the transactions collection, written into locks for readers. */
    private final String coordinator;
    private final Refusals refusals;

    LockedWrites(Targets targets, String coordinator, Refusals refusals) {
        this.targets = targets;
        this.coordinator = coordinator;
        this.refusals = refusals;
    }

    /** Takes the document of {@code op} (an update or a delete) for {@code txId}, then changes it for an update. */
    Result apply(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
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
            Result why = refusals.whyNotApplied(coll, op, txId, deadline);
            if (why.kind() != Kind.DONE) {
                return why;
            }
            // Taken by us before (acknowledgement lost, or a previous owner): changed already?
            before = taken(coll, id, txId);
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
            replacement.put(Versions.FIELD, Versions.of(beforeImage) + 1); // the change counts its commit
            replacement.append(Fields.MARKERS, List.of(txId)).append(Fields.LOCK, lock);
            matched = coll.replaceOne(filter, replacement).getMatchedCount();
        } else {
            Document update = Versions.counted(op.update());
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
    public static Document strip(Document doc) {
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
            others.removeIf(marker -> Ids.sameId(marker, txId));
            doc.put(Fields.MARKERS, others);
        }
        return doc;
    }

    /** Reverses {@code op} (an update or a delete) if its document is taken by {@code txId}. */
    Result undo(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
        Document taken = taken(coll, id, txId);
        if (taken == null) {
            return Result.DONE; // never taken, or undone before
        }
        Document filter = fenced(Exclusive.tutorialLocked(id, txId), deadline);
        long matched;
        Document undo = taken.get(Fields.LOCK, Document.class).get("undo", Document.class);
        if (undo != null) {
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

    /** Ends the take of {@code op}'s document by {@code txId}: deletes it for a delete, unlocks it for an update. */
    Result release(Operation op, Object txId, Instant deadline) {
        MongoCollection<Document> coll = targets.collection(op.document());
        Object id = op.document().id();
        if (op instanceof Operation.Delete) {
            long deleted = coll.deleteOne(fenced(Exclusive.tutorialLocked(id, txId), deadline)).getDeletedCount();
            return deleted == 1 ? Result.DONE : stillTaken(coll, id, txId);
        }
        return unlock(coll, id, txId, deadline);
    }

    /** Removes the lock of {@code txId} and its marker (the array too if the document had none before). */
    static Result unlock(MongoCollection<Document> coll, Object id, Object txId, Instant deadline) {
        Document filter = fenced(Exclusive.tutorialLocked(id, txId), deadline);
        long matched = coll.updateOne(new Document(filter).append(Fields.LOCK_NO_MARKERS, true), unlock(txId, true)).getMatchedCount();
        if (matched == 0) {
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

    /** The document {@code id} while {@code txId} holds its lock, else null. */
    static Document taken(MongoCollection<Document> coll, Object id, Object txId) {
        return coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.exclude("__none")).first();
    }

    /** After a fenced write matched nothing: done if the lock of {@code txId} is gone, else the deadline passed. */
    static Result stillTaken(MongoCollection<Document> coll, Object id, Object txId) {
        Document current = coll.find(Exclusive.tutorialLocked(id, txId)).projection(Projections.include(Fields.ID)).first();
        return current == null ? Result.DONE : Result.EXPIRED;
    }
}
