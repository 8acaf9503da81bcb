package io.mongo2pc.internal;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;

/**
 * The participant writes of inserts, updates and deletes under the two-round commit
 * (docs/PROTOCOL.md, "The writes"). The prepare takes the document with a lock
 * {@code _m2pc: {tx, kind, c, n, until, change?, replace?}} and changes nothing the user sees: an
 * update's change waits in the lock, a delete leaves the document, an insert writes a document no
 * reader shows until its transaction commits. The release applies the change (or deletes) and
 * removes the lock; the undo deletes an insert and unlocks the others. No marker goes into
 * {@code pendingTransactions}: the lock alone says the document is taken. Every write after the
 * prepare is conditional on the lock with this transaction's nonce, so it happens once and never
 * touches another transaction with the same id. Thread-safe (stateless).
 */
final class Exclusive {
    static final String CHANGE = "change";
    static final String REPLACE = "replace";

    private Exclusive() { }

    /** True if {@code lock} is a two-round lock (it carries a nonce). */
    static boolean isTwoRound(Document lock) {
        return lock != null && lock.get(Entries.NONCE) instanceof String;
    }

    /** The two-round lock on {@code doc}, or null. */
    static Document lockOf(Document doc) {
        Document lock = doc == null ? null : doc.get(Fields.LOCK, Document.class);
        return isTwoRound(lock) ? lock : null;
    }

    /** The filter of every write after the prepare: the lock of {@code txId} with {@code nonce}. */
    static Document locked(Object docId, Object txId, String nonce) {
        return new Document(Fields.ID, docId).append(Fields.LOCK_TX, txId).append(Fields.LOCK + "." + Entries.NONCE, nonce);
    }

    /** The filter of a tutorial-rules write on {@code txId}'s lock: one without a nonce (never a two-round lock of the same id). */
    static Document tutorialLocked(Object docId, Object txId) {
        return new Document(Fields.ID, docId).append(Fields.LOCK_TX, txId).append(Fields.LOCK_NONCE, new Document("$exists", false));
    }

    /** The prepare of {@code op}, sent on its own: in effect (now or before, with this nonce), or why not. */
    static Participants.Result prepare(MongoCollection<Document> coll, Operation op, Object txId, String nonce, Instant until,
                                       String coordinator) {
        if (op instanceof Operation.Insert insert) {
            return Inserts.apply(coll, insert, txId, until, coordinator, nonce);
        }
        Object id = op.document().id();
        Document filter = Participants.fenced(new Document(Fields.ID, id), until)
                .append(Fields.MARKERS + ".0", new Document("$exists", false))
                .append(Fields.LOCK, new Document("$exists", false));
        filter.putAll(op.guard());
        Document numbers = numbersFilter(op);
        if (numbers != null) {
            filter.append("$and", numbers.get("$and"));
        }
        Document lock = new Document("tx", txId).append("kind", OperationCodec.kind(op)).append("c", coordinator)
                .append(Entries.NONCE, nonce).append(Entries.UNTIL, Date.from(until));
        if (op instanceof Operation.Update update) {
            lock.append(CHANGE, update.update());
            if (update.isReplacement()) {
                lock.append(REPLACE, true);
            }
        }
        try {
            if (coll.updateOne(filter, new Document("$set", new Document(Fields.LOCK, lock))).getMatchedCount() == 1) {
                return Participants.Result.DONE;
            }
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            return Participants.Result.refused(ReasonCode.GUARD_FAILED, "cannot take " + op.document() + " for the "
                    + OperationCodec.kind(op) + ": " + e.getMessage());
        }
        return whyNotTaken(coll, op, txId, nonce, until, numbers);
    }

    /**
     * For an update that increments or multiplies fields: each of them absent or a number, so that
     * the server cannot refuse the change at the release, after the commit point. Null if none.
     */
    static Document numbersFilter(Operation op) {
        if (!(op instanceof Operation.Update update) || update.isReplacement()) {
            return null;
        }
        List<Document> clauses = new ArrayList<>();
        for (String operator : List.of("$inc", "$mul")) {
            if (update.update().get(operator) instanceof Document fields) {
                for (String field : fields.keySet()) {
                    clauses.add(new Document("$or", List.of(new Document(field, new Document("$exists", false)),
                            new Document(field, new Document("$type", "number")))));
                }
            }
        }
        return clauses.isEmpty() ? null : new Document("$and", clauses);
    }

    private static Participants.Result whyNotTaken(MongoCollection<Document> coll, Operation op, Object txId, String nonce,
                                                   Instant until, Document numbers) {
        Object id = op.document().id();
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return Participants.Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + op.document() + " does not exist");
        }
        Document lock = current.get(Fields.LOCK, Document.class);
        if (lock != null && Participants.sameId(lock.get("tx"), txId) && nonce.equals(lock.get(Entries.NONCE))) {
            return Participants.Result.DONE; // taken before (a lost answer, or a previous owner)
        }
        if (lock != null && Inserts.isLate(current)) {
            Inserts.deleteLate(coll, id, current);
            return Participants.Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + op.document() + " does not exist");
        }
        if (lock != null) {
            return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document() + " is taken by transaction "
                    + lock.get("tx"));
        }
        List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
        if (!markers.isEmpty()) {
            return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + op.document()
                    + " has pending transactions " + markers);
        }
        if (coll.find(Participants.fenced(new Document(Fields.ID, id), until)).projection(Projections.include(Fields.ID)).first() == null) {
            return Participants.Result.EXPIRED;
        }
        if (numbers != null && coll.find(new Document(Fields.ID, id).append("$and", numbers.get("$and")))
                .projection(Projections.include(Fields.ID)).first() == null) {
            return Participants.Result.refused(ReasonCode.GUARD_FAILED, "cannot apply the update to " + op.document()
                    + ": a field it increments or multiplies is not a number");
        }
        return Refusals.byGuard(coll, op);
    }

    /**
     * The release (roll forward) of the two-round lock {@code lock} of {@code txId} on document
     * {@code docId}: an insert is unlocked, an update's stored change applied with the unlock in one
     * write, a delete deletes. No deadline: only a committed transaction is released. DONE if it
     * matched or the lock is gone (released before, by anyone).
     */
    static Participants.Result release(MongoCollection<Document> coll, Object docId, Object txId, Document lock) {
        String nonce = lock.getString(Entries.NONCE);
        Document filter = locked(docId, txId, nonce);
        String kind = lock.getString("kind");
        long matched;
        if ("delete".equals(kind)) {
            matched = coll.deleteOne(filter).getDeletedCount();
        } else if ("update".equals(kind) && Boolean.TRUE.equals(lock.get(REPLACE))) {
            Document replacement = new Document(Fields.ID, docId);
            replacement.putAll(lock.get(CHANGE, Document.class));
            replacement.put(Fields.ID, docId);
            // A tutorial account keeps its (empty: the lock excluded every marker) marker array.
            Document withArray = new Document(replacement).append(Fields.MARKERS, List.of());
            matched = coll.replaceOne(new Document(filter).append(Fields.MARKERS, new Document("$exists", true)), withArray)
                    .getMatchedCount();
            if (matched == 0) {
                matched = coll.replaceOne(filter, replacement).getMatchedCount();
            }
        } else if ("update".equals(kind)) {
            Document update = new Document();
            lock.get(CHANGE, Document.class).forEach((operator, fields) -> update.append(operator, new Document((Document) fields)));
            ((Document) update.computeIfAbsent("$unset", k -> new Document())).append(Fields.LOCK, "");
            matched = coll.updateOne(filter, update).getMatchedCount();
        } else {
            matched = coll.updateOne(filter, new Document("$unset", new Document(Fields.LOCK, ""))).getMatchedCount();
        }
        return matched == 1 ? Participants.Result.DONE : stillLocked(coll, filter);
    }

    /**
     * The undo of {@code txId}'s lock with {@code nonce}: an insert is deleted, an update or a delete
     * unlocked (its change never took effect). With {@code deadline} (the owner's, while canceling)
     * fenced; without (a resolver, once nothing can take the document again for it) not.
     */
    static Participants.Result undo(MongoCollection<Document> coll, Object docId, Object txId, String nonce, String kind,
                                    Instant deadline) {
        Document filter = locked(docId, txId, nonce);
        Document write = deadline == null ? filter : Participants.fenced(new Document(filter), deadline);
        long matched = "insert".equals(kind)
                ? coll.deleteOne(write).getDeletedCount()
                : coll.updateOne(write, new Document("$unset", new Document(Fields.LOCK, ""))).getMatchedCount();
        return matched == 1 ? Participants.Result.DONE : stillLocked(coll, filter);
    }

    private static Participants.Result stillLocked(MongoCollection<Document> coll, Document filter) {
        return coll.find(filter).projection(Projections.include(Fields.ID)).first() == null
                ? Participants.Result.DONE : Participants.Result.EXPIRED;
    }

    /** The nonce of the two-round lock on {@code doc}, or null. */
    static String nonceOf(Document doc) {
        Document lock = lockOf(doc);
        return lock == null ? null : lock.getString(Entries.NONCE);
    }

    /** True if {@code lock} is {@code txId}'s with {@code nonce}. */
    static boolean isOf(Document lock, Object txId, String nonce) {
        return lock != null && Participants.sameId(lock.get("tx"), txId) && Objects.equals(nonce, lock.get(Entries.NONCE));
    }
}
