package io.mongo2pc.internal.participants;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.wire.Retrier;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Objects;

/**
 * The participant writes of inserts, updates and deletes under the two-round commit
 * (docs/TWO-ROUND.md, "The writes"). The prepare takes the document with a lock
 * {@code _m2pc: {tx, kind, c, n, until, p}} and changes nothing the user sees; an update's change
 * follows before the commit point (round 1b: {@link #change}), applied with its before-image stored
 * as the lock's {@code undo} and 1 added to the version ({@link Versions}) in one write, so that a
 * change the server refuses cancels the
 * transaction. An insert writes a document no reader shows until its transaction commits. The
 * release removes the lock (a delete deletes); the undo deletes an insert, restores an update's
 * before-image, and unlocks. No marker goes into {@code pendingTransactions}: the lock alone says the
 * document is taken. Every write after the take is conditional on the lock with this transaction's
 * nonce, so it happens once and never touches another transaction with the same id. Thread-safe
 * (stateless).
 * Public for the tworound, reads and interactive packages, as are the members they use.
 */
public final class Exclusive {
    public static final String UNDO = "undo";

    private Exclusive() { }

    /**
     * What a take did: its result and, for an update taken whose change has not run yet, its lock
     * and the document's content before the update (both null otherwise).
     */
    public record Take(Participants.Result result, Document lock, Document before) {
        static Take of(Participants.Result result) {
            return new Take(result, null, null);
        }

        /** True if the update's change (round 1b) is still to be sent. */
        public boolean toChange() {
            return result.kind() == Participants.Kind.DONE && before != null;
        }
    }

    /** True if {@code lock} is a two-round lock (it carries a nonce). */
    public static boolean isTwoRound(Document lock) {
        return lock != null && lock.get(EntryName.NONCE) instanceof String;
    }

    /** The two-round lock on {@code doc}, or null. */
    public static Document lockOf(Document doc) {
        Document lock = doc == null ? null : doc.get(Fields.LOCK, Document.class);
        return isTwoRound(lock) ? lock : null;
    }

    /** The filter of every write after the prepare: the lock of {@code txId} with {@code nonce}. */
    public static Document locked(Object docId, Object txId, String nonce) {
        return new Document(Fields.ID, docId).append(Fields.LOCK_TX, txId).append(Fields.LOCK + "." + EntryName.NONCE, nonce);
    }

    /** The filter of a tutorial-rules write on {@code txId}'s lock: one without a nonce (never a two-round lock of the same id). */
    static Document tutorialLocked(Object docId, Object txId) {
        return new Document(Fields.ID, docId).append(Fields.LOCK_TX, txId).append(Fields.LOCK_NONCE, new Document("$exists", false));
    }

    /**
     * The prepare (round 1) of {@code op}, sent on its own: in effect (now or before, with this
     * nonce), or why not. An update's take in effect comes with what its change needs, unless the
     * change ran before.
     */
    public static Take take(MongoCollection<Document> coll, Operation op, Object txId, String nonce, Priority priority, Instant until,
                     String coordinator) {
        if (op instanceof Operation.Insert insert) {
            return Take.of(Inserts.apply(coll, insert, txId, until, coordinator, nonce, priority));
        }
        Object id = op.document().id();
        Document filter = Participants.fenced(new Document(Fields.ID, id), until)
                .append(Fields.MARKERS + ".0", new Document("$exists", false))
                .append(Fields.LOCK, new Document("$exists", false));
        filter.putAll(op.guard());
        Document lock = new Document("tx", txId).append("kind", OperationCodec.kind(op)).append("c", coordinator)
                .append(EntryName.NONCE, nonce).append(EntryName.UNTIL, Date.from(until)).append(Priority.FIELD, priority.written());
        Document before;
        try {
            before = coll.findOneAndUpdate(filter, new Document("$set", new Document(Fields.LOCK, lock)),
                    new FindOneAndUpdateOptions().projection(Projections.exclude("__none")).returnDocument(ReturnDocument.BEFORE));
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            return Take.of(Participants.Result.refused(ReasonCode.GUARD_FAILED, "cannot take " + op.document() + " for the "
                    + OperationCodec.kind(op) + ": " + serverMessage(e)));
        }
        boolean update = op instanceof Operation.Update;
        if (before != null) {
            return update ? new Take(Participants.Result.DONE, lock, LockedWrites.strip(before)) : Take.of(Participants.Result.DONE);
        }
        Participants.Result why = whyNotTaken(coll, op, txId, nonce, until);
        if (why.kind() != Participants.Kind.DONE || !update) {
            return Take.of(why);
        }
        // Taken before (a lost answer, a previous owner): changed already?
        Document current = coll.find(locked(id, txId, nonce)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return Take.of(Participants.Result.EXPIRED); // unlocked since by a resolver, past the deadline
        }
        Document stored = current.get(Fields.LOCK, Document.class);
        return stored.containsKey(UNDO) ? Take.of(Participants.Result.DONE) : new Take(Participants.Result.DONE, stored,
                LockedWrites.strip(current));
    }

    /**
     * Round 1b of an update taken by {@code taken}: its change applied and its before-image stored in
     * the lock, one write, fenced by {@code until}, only on our lock without a before-image. A refusal
     * by the server (a unique index, a validator, a type error, the size limit) is a refusal of the
     * operation, before the commit point.
     */
    public static Participants.Result change(MongoCollection<Document> coll, Operation.Update op, Object txId, String nonce, Instant until,
                                      Take taken) {
        Object id = op.document().id();
        Document filter = Participants.fenced(locked(id, txId, nonce), until).append(Fields.LOCK_UNDO, new Document("$exists", false));
        try {
            long matched;
            if (op.isReplacement()) {
                Document replacement = new Document(Fields.ID, id);
                replacement.putAll(op.update());
                replacement.put(Fields.ID, id);
                if (taken.before().containsKey(Fields.MARKERS) && !replacement.containsKey(Fields.MARKERS)) {
                    replacement.put(Fields.MARKERS, List.of()); // a tutorial account keeps its (empty) marker array
                }
                replacement.put(Versions.FIELD, Versions.of(taken.before()) + 1); // the change counts its commit
                replacement.put(Fields.LOCK, new Document(taken.lock()).append(UNDO, taken.before()));
                matched = coll.replaceOne(filter, replacement).getMatchedCount();
            } else {
                Document update = Versions.counted(op.update());
                ((Document) update.computeIfAbsent("$set", k -> new Document())).append(Fields.LOCK_UNDO, taken.before());
                matched = coll.updateOne(filter, update).getMatchedCount();
            }
            if (matched == 1) {
                return Participants.Result.DONE;
            }
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            return Participants.Result.refused(ReasonCode.GUARD_FAILED, "the database refused the update of " + op.document()
                    + ": " + serverMessage(e));
        }
        Document current = coll.find(locked(id, txId, nonce)).projection(Projections.include(Fields.LOCK_UNDO)).first();
        return current != null && current.get(Fields.LOCK, Document.class).containsKey(UNDO)
                ? Participants.Result.DONE : Participants.Result.EXPIRED; // changed before; else the deadline
    }

    /** The server's own words for a refused write. */
    public static String serverMessage(MongoServerException e) {
        if (e instanceof MongoWriteException w) {
            return w.getError().getMessage();
        }
        return e instanceof MongoCommandException c ? c.getErrorMessage() : e.getMessage();
    }

    private static Participants.Result whyNotTaken(MongoCollection<Document> coll, Operation op, Object txId, String nonce,
                                                   Instant until) {
        Object id = op.document().id();
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return Participants.Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + op.document() + " does not exist");
        }
        Document lock = current.get(Fields.LOCK, Document.class);
        if (lock != null && Ids.sameId(lock.get("tx"), txId) && nonce.equals(lock.get(EntryName.NONCE))) {
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
        return Refusals.byGuard(coll, op);
    }

    /**
     * The release (roll forward) of the two-round lock {@code lock} of {@code txId} on document
     * {@code docId}: the lock removed (an update's change is in since round 1b), a delete deletes.
     * No deadline: only a committed transaction is released. DONE if it matched or the lock is gone
     * (released before, by anyone).
     */
    public static Participants.Result release(MongoCollection<Document> coll, Object docId, Object txId, Document lock) {
        Document filter = locked(docId, txId, lock.getString(EntryName.NONCE));
        long matched = "delete".equals(lock.getString("kind"))
                ? coll.deleteOne(filter).getDeletedCount()
                : coll.updateOne(filter, new Document("$unset", new Document(Fields.LOCK, ""))).getMatchedCount();
        return matched == 1 ? Participants.Result.DONE : stillLocked(coll, filter);
    }

    /**
     * The release of {@code txId}'s lock with {@code nonce} on document {@code docId} as it is stored
     * (its kind says what the release does): DONE also when no such lock is there (released before,
     * by anyone).
     */
    public static Participants.Result releaseLocked(MongoCollection<Document> coll, Object docId, Object txId, String nonce) {
        Document doc = coll.find(locked(docId, txId, nonce)).projection(Projections.exclude("__none")).first();
        return doc == null ? Participants.Result.DONE : release(coll, docId, txId, doc.get(Fields.LOCK, Document.class));
    }

    /**
     * The undo of {@code txId}'s lock with {@code nonce}: an insert is deleted, an update restored
     * from its before-image if its change ran (else unlocked), a delete unlocked. With
     * {@code deadline} (the owner's, while canceling) fenced; without (a resolver, once nothing can
     * take the document again for it) not.
     */
    public static Participants.Result undo(MongoCollection<Document> coll, Object docId, Object txId, String nonce, String kind,
                                    Instant deadline) {
        Document filter = locked(docId, txId, nonce);
        if ("insert".equals(kind)) {
            Document write = deadline == null ? filter : Participants.fenced(new Document(filter), deadline);
            return coll.deleteOne(write).getDeletedCount() == 1 ? Participants.Result.DONE : stillLocked(coll, filter);
        }
        // Each write requires the lock as read (with or without its before-image), so a change that
        // landed in between is never left behind; read again then.
        for (int attempt = 0; attempt < 3; attempt++) {
            Document taken = coll.find(filter).projection(Projections.exclude("__none")).first();
            if (taken == null) {
                return Participants.Result.DONE; // undone or released before
            }
            Document undo = taken.get(Fields.LOCK, Document.class).get(UNDO, Document.class);
            Document write = new Document(filter).append(Fields.LOCK_UNDO, new Document("$exists", undo != null));
            write = deadline == null ? write : Participants.fenced(write, deadline);
            long matched;
            if (undo != null) {
                Document restored = new Document(Fields.ID, docId);
                restored.putAll(undo);
                restored.put(Fields.ID, docId);
                restored.remove(Fields.LOCK);
                matched = coll.replaceOne(write, restored).getMatchedCount();
            } else {
                matched = coll.updateOne(write, new Document("$unset", new Document(Fields.LOCK, ""))).getMatchedCount();
            }
            if (matched == 1) {
                return Participants.Result.DONE;
            }
            if (deadline != null && coll.find(Participants.fenced(new Document(Fields.ID, docId), deadline))
                    .projection(Projections.include(Fields.ID)).first() == null) {
                return stillLocked(coll, filter); // the deadline passed
            }
        }
        return stillLocked(coll, filter);
    }

    private static Participants.Result stillLocked(MongoCollection<Document> coll, Document filter) {
        return coll.find(filter).projection(Projections.include(Fields.ID)).first() == null
                ? Participants.Result.DONE : Participants.Result.EXPIRED;
    }

    /** The nonce of the two-round lock on {@code doc}, or null. */
    public static String nonceOf(Document doc) {
        Document lock = lockOf(doc);
        return lock == null ? null : lock.getString(EntryName.NONCE);
    }

    /** True if {@code lock} is {@code txId}'s with {@code nonce}. */
    public static boolean isOf(Document lock, Object txId, String nonce) {
        return lock != null && Ids.sameId(lock.get("tx"), txId) && Objects.equals(nonce, lock.get(EntryName.NONCE));
    }
}
