package io.mongo2pc.internal.participants;

import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;

import static io.mongo2pc.internal.format.EntryName.COORDINATOR;
import static io.mongo2pc.internal.format.EntryName.LATER;
import static io.mongo2pc.internal.format.EntryName.NONCE;
import static io.mongo2pc.internal.format.EntryName.NOW;
import static io.mongo2pc.internal.format.EntryName.UNTIL;

/**
 * The participant writes of the two-round commit (docs/TWO-ROUND.md).
 * An increment is split by sign: its decreases ({@code now}) are held at the prepare, under the
 * guard, its increases ({@code later}) wait for the release, after the commit point. Each write
 * carries the transaction's marker in {@code pendingTransactions} and an entry
 * {@code _m2pc_<id>: {now, later, until, n, c, p}} beside it, added and removed in the same write;
 * the nonce {@code n} keeps every write off another transaction that has the same id.
 * Thread-safe.
 * Public for the tworound package and Engine, as are the members they use.
 */
public final class Entries {

    private final Targets targets;
    private final int maxMarkers;
    /** "database.collection" of the transactions collection, written into entries for readers. */
    private final String coordinator;

    public Entries(Targets targets, int maxMarkers, String coordinator) {
        this.targets = targets;
        this.maxMarkers = maxMarkers;
        this.coordinator = coordinator;
    }

    public String coordinator() {
        return coordinator;
    }

    /** The decreases of {@code inc} (held at the prepare); zero amounts are dropped. */
    public static Document now(Operation.Increment inc) {
        return bySign(inc, -1);
    }

    /** The increases of {@code inc} (applied at the release). */
    public static Document later(Operation.Increment inc) {
        return bySign(inc, +1);
    }

    private static Document bySign(Operation.Increment inc, int sign) {
        Document part = new Document();
        for (Map.Entry<String, Object> e : inc.increments().entrySet()) {
            if (e.getValue() instanceof Number n && Numbers.isFinite(n) && Numbers.exact(n).signum() == sign) {
                part.append(e.getKey(), n);
            }
        }
        return part;
    }

    /** {@code amounts} negated, for an undo. */
    static Document negated(Document amounts) {
        Document negated = new Document();
        amounts.forEach((field, amount) -> negated.append(field, Numbers.negate((Number) amount)));
        return negated;
    }

    /**
     * The prepare of {@code inc}: where the marker is absent, the document not full, not taken by an
     * exclusive operation, the guard holds and the server's clock is before {@code until}: holds the
     * decreases, adds the marker and the entry (with the transaction's {@link Priority}).
     */
    public UpdateOneModel<Document> prepareWrite(Operation.Increment inc, Object txId, String nonce, Priority priority, Instant until) {
        Document filter = Participants.fenced(new Document(Fields.ID, inc.document().id()), until)
                .append(Fields.MARKERS, new Document("$ne", txId))
                .append(Fields.MARKERS + "." + (maxMarkers - 1), new Document("$exists", false))
                .append(Fields.LOCK, new Document("$exists", false));
        filter.putAll(inc.guard());
        Document now = now(inc);
        Document entry = new Document();
        if (!now.isEmpty()) {
            entry.append(NOW, now);
        }
        Document later = later(inc);
        if (!later.isEmpty()) {
            entry.append(LATER, later);
        }
        entry.append(UNTIL, Date.from(until)).append(NONCE, nonce).append(COORDINATOR, coordinator)
                .append(Priority.FIELD, priority.written());
        Document update = new Document("$push", new Document(Fields.MARKERS, txId))
                .append("$set", new Document(EntryName.of(txId), entry));
        if (!now.isEmpty()) {
            update.append("$inc", now);
        }
        return new UpdateOneModel<>(filter, update);
    }

    /**
     * The prepare of {@code inc} sent on its own: in effect (now or before, with this nonce), or why
     * not. A server's refusal for good (an increment of a text field) is a refusal of the operation.
     */
    public Participants.Result prepareAlone(Operation.Increment inc, Object txId, String nonce, Priority priority, Instant until) {
        MongoCollection<Document> coll = targets.collection(inc.document());
        UpdateOneModel<Document> write = prepareWrite(inc, txId, nonce, priority, until);
        try {
            if (coll.updateOne(write.getFilter(), write.getUpdate()).getMatchedCount() == 1) {
                return Participants.Result.DONE;
            }
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            return Participants.Result.refused(ReasonCode.GUARD_FAILED, "cannot prepare the increment of " + inc.document()
                    + ": " + e.getMessage());
        }
        return whyNotPrepared(coll, inc, txId, nonce, until);
    }

    /**
     * Why a prepare matched nothing: in effect before, the document missing, a lock, full, the
     * guard, or the deadline. A guard that does not hold refuses whatever the deadline says (two
     * reads); only when it holds does a third read tell a passed deadline from a race.
     */
    Participants.Result whyNotPrepared(MongoCollection<Document> coll, Operation.Increment inc, Object txId, String nonce,
                                       Instant until) {
        Object id = inc.document().id();
        Document current = coll.find(new Document(Fields.ID, id)).projection(Projections.exclude("__none")).first();
        if (current == null) {
            return Participants.Result.refused(ReasonCode.DOCUMENT_MISSING, "document " + inc.document() + " does not exist");
        }
        List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
        if (markers.stream().anyMatch(m -> Ids.sameId(m, txId))) {
            if (nonce.equals(nonceOf(current, txId))) {
                return Participants.Result.DONE; // prepared before (a lost answer, or a previous owner)
            }
            return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + inc.document()
                    + " is prepared by another transaction with the id " + txId);
        }
        Document lock = current.get(Fields.LOCK, Document.class);
        if (lock != null) {
            return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: document " + inc.document()
                    + " is taken by transaction " + lock.get("tx"));
        }
        if (markers.size() >= maxMarkers) {
            return Participants.Result.busy(ReasonCode.TIMED_OUT, "document " + inc.document() + " has " + markers.size()
                    + " pending transactions, the most allowed (maxMarkers)");
        }
        Document failing = Refusals.guardFailing(coll, inc);
        if (failing != null) {
            return Refusals.refusedByGuard(inc, failing);
        }
        if (coll.find(Participants.fenced(new Document(Fields.ID, id), until)).projection(Projections.include(Fields.ID)).first() == null) {
            return Participants.Result.EXPIRED;
        }
        return Participants.Result.busy(ReasonCode.CONFLICT, "conflict: the prepare of " + inc.document()
                + " was refused while another transaction held it, and the guard holds now");
    }

    /** The nonce of {@code txId}'s entry on {@code doc}, or null. */
    static String nonceOf(Document doc, Object txId) {
        Document entry = doc.get(EntryName.of(txId)) instanceof Document d ? d : null;
        return entry == null || !(entry.get(NONCE) instanceof String n) ? null : n;
    }

    /**
     * The release (roll forward) of {@code txId}'s entry on {@code ref}: where its marker and entry
     * with this nonce are, applies the increases, adds 1 to the version ({@link Versions}) and
     * removes both. No deadline: only a committed transaction is released, and no marker of it can
     * come back.
     */
    public static UpdateOneModel<Document> releaseWrite(Object docId, Object txId, String nonce, Document later) {
        Document inc = later == null ? new Document() : new Document(later);
        inc.putAll(Versions.bump()); // the release counts the commit in the document's version
        Document update = new Document("$pull", new Document(Fields.MARKERS, txId))
                .append("$unset", new Document(EntryName.of(txId), ""))
                .append("$inc", inc);
        return new UpdateOneModel<>(entryFilter(docId, txId, nonce), update);
    }

    /**
     * The undo of {@code txId}'s entry: gives the held decreases back and removes marker and
     * entry. With {@code deadline} (the owner's, while canceling) fenced; without (a resolver, once
     * nothing can prepare again) not.
     */
    public static UpdateOneModel<Document> undoWrite(Object docId, Object txId, String nonce, Document now, Instant deadline) {
        Document filter = entryFilter(docId, txId, nonce);
        if (deadline != null) {
            Participants.fenced(filter, deadline);
        }
        Document update = new Document("$pull", new Document(Fields.MARKERS, txId))
                .append("$unset", new Document(EntryName.of(txId), ""));
        if (now != null && !now.isEmpty()) {
            update.append("$inc", negated(now));
        }
        return new UpdateOneModel<>(filter, update);
    }

    /** The filter of {@code txId}'s entry with this nonce on {@code docId} (and its marker). */
    public static Document entryFilter(Object docId, Object txId, String nonce) {
        return new Document(Fields.ID, docId).append(Fields.MARKERS, txId).append(EntryName.of(txId) + "." + NONCE, nonce);
    }

    /**
     * Sends {@code write} (a release or an undo) on its own: DONE if it matched or the entry is
     * gone (done before, by anyone), EXPIRED if the entry is still there (the deadline passed).
     */
    public static Participants.Result entryWrite(MongoCollection<Document> coll, Object docId, Object txId, String nonce,
                                          UpdateOneModel<Document> write) {
        if (coll.updateOne(write.getFilter(), write.getUpdate()).getMatchedCount() == 1) {
            return Participants.Result.DONE;
        }
        Document still = coll.find(entryFilter(docId, txId, nonce)).projection(Projections.include(Fields.ID)).first();
        return still == null ? Participants.Result.DONE : Participants.Result.EXPIRED;
    }
}
