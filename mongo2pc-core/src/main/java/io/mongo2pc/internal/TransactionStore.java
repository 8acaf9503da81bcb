package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import io.mongo2pc.TransactionState;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * The coordinator collection. Every stored state change passes through {@link #move}: a
 * compare-and-set on the current state and on the owner's epoch, stamping {@code lastModified}
 * with the server's clock. A change that matches nothing means another process moved the
 * transaction or took it over. Thread-safe.
 */
final class TransactionStore {
    private final MongoCollection<Document> transactions;

    TransactionStore(MongoCollection<Document> transactions) {
        this.transactions = transactions;
    }

    MongoCollection<Document> collection() {
        return transactions;
    }

    /**
     * Writes a new transaction document unless one with its id exists. Returns true if this call
     * created it; false if it existed (then the caller checks whether it is its own, written by a
     * try whose acknowledgement was lost).
     */
    boolean insert(Object id, Document fields) {
        // An upsert, not an insert, so that lastModified comes from the server's clock.
        UpdateResult result = transactions.updateOne(
                new Document(Fields.ID, id),
                new Document("$setOnInsert", fields).append("$currentDate", new Document(Fields.LAST_MODIFIED, true)),
                new UpdateOptions().upsert(true));
        return result.getUpsertedId() != null;
    }

    /**
     * Moves {@code id} from {@code from} to {@code to} if it is still in {@code from} under
     * {@code epoch}. Returns true if this call moved it. {@code extra} fields are set in the same write.
     */
    boolean move(Object id, long epoch, TransactionState from, TransactionState to, Document extra) {
        if (!from.canMoveTo(to)) {
            throw new IllegalStateException("transaction " + id + ": " + from.stored() + " -> " + to.stored()
                    + " is not a transition of the protocol");
        }
        Document set = new Document(Fields.STATE, to.stored());
        if (extra != null) {
            set.putAll(extra);
        }
        UpdateResult result = transactions.updateOne(
                new Document(Fields.ID, id).append(Fields.STATE, in(from)).append(Fields.EPOCH, epoch),
                new Document("$set", set).append("$currentDate", new Document(Fields.LAST_MODIFIED, true)));
        return result.getMatchedCount() == 1;
    }

    /** Claims the oldest queued transaction for {@code application}: one findAndModify, one winner. */
    Document claim(String application, String owner) {
        return transactions.findOneAndUpdate(
                new Document(Fields.STATE, in(TransactionState.INITIAL)).append(Fields.APPLICATION, new Document("$exists", false)),
                new Document("$set", new Document(Fields.STATE, TransactionState.PENDING.stored())
                        .append(Fields.APPLICATION, application)
                        .append(Fields.OWNER, owner)
                        .append(Fields.EPOCH, 1L))
                        .append("$currentDate", new Document(Fields.LAST_MODIFIED, true)),
                new FindOneAndUpdateOptions().sort(Sorts.ascending(Fields.ID)).returnDocument(ReturnDocument.AFTER));
    }

    /**
     * Takes over {@code seen} (a stale transaction as read) if nobody changed it since: its state,
     * epoch and lastModified must still be the ones read. Bumps the epoch, so every later write of
     * the previous owner matches nothing. Returns the document after the takeover, or null if lost.
     */
    Document takeOver(Document seen, String application, String owner) {
        TransactionState state = stateOf(seen);
        Document filter = new Document(Fields.ID, seen.get(Fields.ID))
                .append(Fields.STATE, seen.get(Fields.STATE))
                .append(Fields.EPOCH, seen.containsKey(Fields.EPOCH) ? seen.get(Fields.EPOCH) : new Document("$exists", false))
                .append(Fields.LAST_MODIFIED, seen.containsKey(Fields.LAST_MODIFIED) ? sameStamp(seen.get(Fields.LAST_MODIFIED)) : new Document("$exists", false));
        return transactions.findOneAndUpdate(filter,
                new Document("$set", new Document(Fields.STATE, state.stored())
                        .append(Fields.APPLICATION, application)
                        .append(Fields.OWNER, owner)
                        .append(Fields.EPOCH, epochOf(seen) + 1))
                        .append("$currentDate", new Document(Fields.LAST_MODIFIED, true)),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).projection(Projections.exclude("__none")));
    }

    /**
     * Matches the lastModified that was read. A Date is matched as the millisecond it names, not
     * by equality: the embedded server keeps {@code $currentDate} below the millisecond but
     * returns it in milliseconds, so an equality filter on the value read never matches there.
     */
    private static Object sameStamp(Object seen) {
        if (seen instanceof Date date) {
            return new Document("$gte", date).append("$lt", new Date(date.getTime() + 1));
        }
        return seen;
    }

    /** Cancels a queued transaction nobody has claimed. True if this call canceled it. */
    boolean cancelQueued(Object id, String reason) {
        UpdateResult result = transactions.updateOne(
                new Document(Fields.ID, id).append(Fields.STATE, in(TransactionState.INITIAL)),
                new Document("$set", new Document(Fields.STATE, TransactionState.CANCELED.stored()).append(Fields.REASON, reason))
                        .append("$currentDate", new Document(Fields.LAST_MODIFIED, true)));
        return result.getMatchedCount() == 1;
    }

    Document find(Object id) {
        return transactions.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
    }

    /** Open transactions in {@code states} not modified since {@code staleBefore} (server time), oldest first. */
    List<Document> stale(List<TransactionState> states, Instant staleBefore, int limit) {
        List<String> spellings = new ArrayList<>();
        states.forEach(s -> spellings.addAll(s.spellings()));
        Bson filter = new Document(Fields.STATE, new Document("$in", spellings))
                .append("$or", List.of(
                        // "Up to and including the millisecond": see sameStamp for why not $lte.
                        new Document(Fields.LAST_MODIFIED, new Document("$lt", Date.from(staleBefore.plusMillis(1)))),
                        new Document(Fields.LAST_MODIFIED, new Document("$exists", false))));
        return transactions.find(filter).projection(Projections.exclude("__none")).limit(limit).into(new ArrayList<>());
    }

    static Document in(TransactionState state) {
        return new Document("$in", state.spellings());
    }

    static TransactionState stateOf(Document transaction) {
        Object raw = transaction.get(Fields.STATE);
        return TransactionState.parse(raw instanceof String s ? s : null).orElseThrow(() -> new IllegalStateException(
                "transaction " + transaction.get(Fields.ID) + " has an unknown state " + raw));
    }

    static long epochOf(Document transaction) {
        Object epoch = transaction.get(Fields.EPOCH);
        return epoch instanceof Number n ? n.longValue() : 0L;
    }
}
