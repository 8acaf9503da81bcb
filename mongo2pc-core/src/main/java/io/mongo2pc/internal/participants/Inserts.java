package io.mongo2pc.internal.participants;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.Versions;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;

/**
 * The writes of an insert (see {@link Participants}). An insert cannot carry a filter, so its
 * apply is an upsert that stamps the server time it ran at ({@code at}) beside the owner's
 * deadline ({@code until}): an insert sent by a paused owner after its deadline is recognisable
 * ({@code at >= until}), and readers and later writers treat it as never written. The new
 * document starts at a random version ({@link Versions}) and is taken under the {@code _m2pc} lock: its undo deletes it, its release unlocks it as
 * an update's does ({@link LockedWrites#unlock}). Thread-safe.
 * Public for the tworound and reads packages, as are the members they use.
 */
public final class Inserts {
    private Inserts() { }

    /**
     * Inserts a document taken by {@code txId}. The upsert matches only a copy written under this
     * deadline or an earlier one: a new owner (later deadline) shares the transaction id, and a
     * paused old owner's late write must not turn the new owner's insert into one that reads as
     * never written.
     */
    static Participants.Result apply(MongoCollection<Document> coll, Operation.Insert op, Object txId, Instant deadline,
                                     String coordinator) {
        return apply(coll, op, txId, deadline, coordinator, null, null);
    }

    /**
     * The same; with {@code nonce} (the two-round commit) the lock carries it and the transaction's
     * {@code priority}, no marker is added (the lock alone says the document is taken), and only a
     * lock with this nonce counts as this transaction's; without, only a lock without a nonce does.
     */
    static Participants.Result apply(MongoCollection<Document> coll, Operation.Insert op, Object txId, Instant deadline,
                                     String coordinator, String nonce, Priority priority) {
        Object id = op.document().id();
        Document content = new Document(op.content());
        content.remove(Fields.ID);
        Document set = new Document(Fields.LOCK_TX, txId).append(Fields.LOCK + ".kind", "insert")
                .append(Fields.LOCK + ".c", coordinator).append(Fields.LOCK + ".until", Date.from(deadline));
        Document update = new Document("$set", set).append("$currentDate", new Document(Fields.LOCK + ".at", true));
        if (nonce == null) {
            set.append(Fields.LOCK_NO_MARKERS, true); // a new document: its release leaves no marker array
            update.append("$addToSet", new Document(Fields.MARKERS, txId));
        } else {
            set.append(Fields.LOCK + "." + EntryName.NONCE, nonce).append(Fields.LOCK + "." + Priority.FIELD, priority.written());
        }
        content.put(Versions.FIELD, Versions.fresh()); // a new document's life starts at a random version
        update.append("$setOnInsert", content);
        try {
            Document stored = coll.findOneAndUpdate(new Document(Fields.ID, id).append(Fields.LOCK_TX, txId)
                            .append(Fields.LOCK + "." + EntryName.NONCE, nonce == null ? new Document("$exists", false) : nonce)
                            .append(Fields.LOCK + ".until", new Document("$lte", Date.from(deadline))), update,
                    new FindOneAndUpdateOptions().upsert(true)
                            .returnDocument(ReturnDocument.AFTER)
                            .projection(Projections.include(Fields.LOCK)));
            if (stored != null && isLate(stored)) {
                // Ran after our deadline, so it reads as never written: remove it (a paused owner
                // leaves nothing behind), then renew the lease and write it again, or stop.
                deleteLate(coll, id, stored);
                return Participants.Result.EXPIRED;
            }
            return Participants.Result.DONE;
        } catch (MongoServerException e) {
            // A findOneAndUpdate reports a duplicate as a command error, an update as a write error.
            if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
            Document existing = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
            if (existing != null && isLate(existing)) {
                // A paused owner's late insert (of another transaction, or of this one under an
                // earlier owner): it never happened. Remove it, try again.
                deleteLate(coll, id, existing);
                return apply(coll, op, txId, deadline, coordinator, nonce, priority);
            }
            if (existing == null && !onId(e)) {
                // No document of the id, and the server names another index: a unique index of the user's refuses it.
                return Participants.Result.refused(ReasonCode.GUARD_FAILED, "the database refused the insert of " + op.document()
                        + ": " + Exclusive.serverMessage(e));
            }
            if (existing == null) {
                // Gone again (an insert of another transaction undone): not refused, send it again.
                return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document()
                        + " existed when inserted and was gone when read");
            }
            Document lock = existing.get(Fields.LOCK, Document.class);
            if (lock != null && Ids.sameId(lock.get("tx"), txId) && "insert".equals(lock.get("kind"))
                    && java.util.Objects.equals(nonce, lock.get(EntryName.NONCE))) {
                // Our transaction's insert, in effect under a later deadline than this one: written by
                // a newer owner (then this owner is fenced at its next state change), or by this
                // owner before its deadline was derived from an earlier stamp (a combined write's
                // stamp is only a lower bound of the server's clock).
                return Participants.Result.DONE;
            }
            return Participants.Result.refused(ReasonCode.DOCUMENT_EXISTS, "document " + op.document() + " already exists", existing);
        }
    }

    /**
     * True if a duplicate-key error is on the {@code _id} index, as the server words it
     * ({@code "... index: _id_ dup key: ..."}); also when it names no index at all.
     */
    static boolean onId(MongoServerException e) {
        String message = Exclusive.serverMessage(e);
        int index = message == null ? -1 : message.indexOf("index: ");
        return index < 0 || message.startsWith("_id_ ", index + "index: ".length());
    }

    /** Removes the document inserted by {@code txId} if it is still taken by it. */
    static Participants.Result undo(MongoCollection<Document> coll, Operation.Insert op, Object txId, Instant deadline) {
        Object id = op.document().id();
        if (LockedWrites.taken(coll, id, txId) == null) {
            return Participants.Result.DONE; // never inserted, or undone before
        }
        long deleted = coll.deleteOne(Participants.fenced(Exclusive.tutorialLocked(id, txId), deadline))
                .getDeletedCount();
        return deleted == 1 ? Participants.Result.DONE : LockedWrites.stillTaken(coll, id, txId);
    }

    /** Removes the lock and marker of {@code txId} from the inserted document: it stays, as the user wrote it. */
    static Participants.Result release(MongoCollection<Document> coll, Operation.Insert op, Object txId, Instant deadline) {
        return LockedWrites.unlock(coll, op.document().id(), txId, deadline);
    }

    /**
     * Deletes a late insert of the transaction named in {@code late} if it is still late: its owner
     * may have renewed its lease and written it again since (then it is valid and stays). True if
     * it deleted it.
     */
    public static boolean deleteLate(MongoCollection<Document> coll, Object id, Document late) {
        return coll.deleteOne(new Document(Fields.ID, id).append(Fields.LOCK_TX, late.get(Fields.LOCK, Document.class).get("tx"))
                .append(Fields.LOCK + ".kind", "insert")
                .append("$expr", new Document("$gte", List.of("$" + Fields.LOCK + ".at", "$" + Fields.LOCK + ".until"))))
                .getDeletedCount() > 0;
    }

    /** True for a document inserted after its owner's deadline: a write that must be treated as never made. */
    public static boolean isLate(Document doc) {
        Document lock = doc.get(Fields.LOCK, Document.class);
        if (lock == null || !"insert".equals(lock.get("kind"))) {
            return false;
        }
        Date at = lock.getDate("at");
        Date until = lock.getDate("until");
        return at != null && until != null && !at.before(until);
    }
}
