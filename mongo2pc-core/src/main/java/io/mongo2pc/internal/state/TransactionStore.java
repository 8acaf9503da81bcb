package io.mongo2pc.internal.state;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.format.WriteInDoubtException;
import io.mongo2pc.internal.wire.WriteCombiner;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.Function;

/**
 * The coordinator collection. Every stored state change is a named {@link Transition} performed
 * by {@link #transition}: a compare-and-set on the current state and on the owner's epoch,
 * stamping {@code lastModified} with the server's clock. A change that matches nothing means another process moved the
 * transaction or took it over. Thread-safe.
 * Public for the admin, tutorial, tworound, reads and recovery packages and Engine, as are the members they use.
 */
public final class TransactionStore {
    private final MongoCollection<Document> transactions;
    /** The transactions with the ids asked for that exist, whole: reads shared with other threads' (DocumentsById). */
    private final Function<List<Object>, List<Document>> byIds;

    public TransactionStore(MongoCollection<Document> transactions, Function<List<Object>, List<Document>> byIds) {
        this.transactions = transactions;
        this.byIds = byIds;
    }

    public MongoCollection<Document> collection() {
        return transactions;
    }

    /**
     * Writes a new transaction document unless one with its id exists. Returns the stored
     * document's {@code lastModified} and {@code token}: the caller compares the token with its own
     * to tell its insert (perhaps retried after a lost acknowledgement) from an id already taken.
     */
    public Document insert(Object id, Document fields) {
        return transactions.findOneAndUpdate(new Document(Fields.ID, id), insertUpdate(fields),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)
                        .projection(Projections.include(Fields.LAST_MODIFIED, Fields.TOKEN)));
    }

    /**
     * The write of {@link #insert} for a {@link WriteCombiner}: it tells whether it inserted, but
     * returns no stamp (the caller takes a lower bound of the server's clock instead).
     */
    public static UpdateOneModel<Document> insertWrite(Object id, Document fields) {
        return new UpdateOneModel<>(new Document(Fields.ID, id), insertUpdate(fields), new UpdateOptions().upsert(true));
    }

    /** An upsert, not an insert, so that lastModified comes from the server's clock. */
    private static Document insertUpdate(Document fields) {
        return new Document("$setOnInsert", fields).append("$currentDate", new Document(Fields.LAST_MODIFIED, true));
    }

    /**
     * The one compare-and-set through which every stored state changes: matches {@code match}
     * (which transaction, under which epoch) while in {@code from}, one of {@code t}'s from-states
     * (unless {@code match} names the exact stored state itself), sets {@code t}'s to-state and
     * {@code fields}, and stamps {@code lastModified} by the server's clock. Returns the document
     * as {@code returning} asks (callers ask for it after the change), or null if nothing matched: another
     * process moved the transaction or took it over.
     */
    Document transition(Transition t, TransactionState from, Document match, Document fields,
                        FindOneAndUpdateOptions returning) {
        Write write = write(t, from, match, fields);
        return transactions.findOneAndUpdate(write.filter(), write.update(), returning);
    }

    /**
     * The write of {@link #transition} for a {@link WriteCombiner}: the same compare-and-set, told
     * only whether it matched.
     */
    public static UpdateOneModel<Document> transitionWrite(Transition t, TransactionState from, Document match, Document fields) {
        Write write = write(t, from, match, fields);
        return new UpdateOneModel<>(write.filter(), write.update());
    }

    private record Write(Document filter, Document update) { }

    private static Write write(Transition t, TransactionState from, Document match, Document fields) {
        TransactionState to = t.to(from); // refuses a from-state the transition does not start from
        Document filter = new Document(match);
        filter.putIfAbsent(Fields.STATE, in(from));
        Document set = new Document(Fields.STATE, to.stored());
        if (fields != null) {
            set.putAll(fields);
        }
        Document stamps = new Document(Fields.LAST_MODIFIED, true);
        if (t == Transition.PENDING_TO_APPLIED) {
            stamps.append(Fields.COMMITTED_AT, true); // the commit point's time, kept when done stamps lastModified again
        }
        return new Write(filter, new Document("$set", set).append("$currentDate", stamps));
    }

    /** Which transaction an owner's change matches: its id, under the owner's epoch. */
    public static Document owned(Object id, long epoch) {
        return new Document(Fields.ID, id).append(Fields.EPOCH, epoch);
    }

    /**
     * Moves {@code id} by {@code t} from {@code from} if it is still there under {@code epoch}.
     * Returns the new {@code lastModified} (server time) if this call moved it, else null.
     * {@code extra} fields are set in the same write.
     */
    public Instant move(Object id, long epoch, Transition t, TransactionState from, Document extra) {
        return move(owned(id, epoch), t, from, extra);
    }

    /** {@link #move} of the transaction {@code match} names (its id, epoch and any further condition). */
    public Instant move(Document match, Transition t, TransactionState from, Document extra) {
        return stamped(transition(t, from, match, extra, STAMP));
    }

    /**
     * Stamps {@code lastModified} anew if {@code id} is still in {@code state} under {@code epoch}
     * (and, with {@code insertedBefore}, was inserted before it): the owner's lease renewed.
     */
    public Instant renew(Object id, long epoch, TransactionState state, Instant insertedBefore) {
        Document filter = new Document(Fields.ID, id).append(Fields.STATE, in(state)).append(Fields.EPOCH, epoch);
        if (insertedBefore != null) {
            filter.append(TwoRoundFields.INSERTED_AT, new Document("$lt", Date.from(insertedBefore)));
        }
        return stamped(transactions.findOneAndUpdate(
                filter,
                new Document("$currentDate", new Document(Fields.LAST_MODIFIED, true)),
                STAMP));
    }

    private static final FindOneAndUpdateOptions STAMP = new FindOneAndUpdateOptions()
            .returnDocument(ReturnDocument.AFTER).projection(Projections.include(Fields.LAST_MODIFIED));

    public static Instant stamped(Document doc) {
        if (doc == null) {
            return null;
        }
        Date stamp = doc.getDate(Fields.LAST_MODIFIED);
        if (stamp == null) {
            throw new IllegalStateException("the server returned no lastModified after $currentDate: " + doc.toJson());
        }
        return stamp.toInstant();
    }

    /**
     * Claims the oldest queued transaction for {@code application}: one findAndModify, one winner.
     * {@code token} marks this claim, so a retry after a lost answer finds what it claimed
     * ({@link #claimedWith}) instead of claiming a second one.
     */
    public Document claim(String application, String owner, long leaseMillis, String token) {
        return transition(Transition.INITIAL_TO_PENDING, TransactionState.INITIAL,
                new Document(Fields.APPLICATION, new Document("$exists", false)),
                ownerFields(application, owner, 1L, leaseMillis, token),
                new FindOneAndUpdateOptions().sort(Sorts.ascending(Fields.ID)).returnDocument(ReturnDocument.AFTER));
    }

    private static Document ownerFields(String application, String owner, long epoch, long leaseMillis, String token) {
        return new Document(Fields.APPLICATION, application)
                .append(Fields.OWNER, owner)
                .append(Fields.EPOCH, epoch)
                .append(Fields.LEASE_MS, leaseMillis)
                .append(Fields.TOKEN, token);
    }

    /**
     * Takes over {@code seen} (a stale transaction as read) if it is still in the state and epoch
     * read and still stale: not modified after {@code staleBefore} (server time). An owner that
     * renewed its lease in between keeps it. Bumps the epoch, so every later state change of the
     * previous owner matches nothing. Returns the document after the takeover, or null if lost.
     */
    public Document takeOver(Document seen, Instant staleBefore, String application, String owner, long leaseMillis, String token) {
        // The exact state and epoch read: a change in between (even to another spelling) wins.
        Document match = new Document(Fields.ID, seen.get(Fields.ID))
                .append(Fields.STATE, seen.get(Fields.STATE))
                .append(Fields.EPOCH, seen.containsKey(Fields.EPOCH) ? seen.get(Fields.EPOCH) : new Document("$exists", false))
                .append(Fields.LAST_MODIFIED, seen.containsKey(Fields.LAST_MODIFIED)
                        ? notAfter(staleBefore) : new Document("$exists", false));
        return transition(Transition.TAKEOVER, stateOf(seen), match,
                ownerFields(application, owner, epochOf(seen) + 1, leaseMillis, token),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).projection(Projections.exclude("__none")));
    }

    /**
     * Repairs {@code late}, a document {@link LateCommit#late} as read, to the canceled state it
     * counts as ({@link LateCommit#repair}: one write, not a state change). False if it matched
     * nothing: repaired by another process meanwhile (or removed).
     */
    public boolean repair(Document late) {
        UpdateOneModel<Document> repair = LateCommit.repair(late);
        return transactions.updateOne(repair.getFilter(), repair.getUpdate()).getMatchedCount() == 1;
    }

    /** Cancels a queued transaction nobody has claimed. True if this call canceled it. */
    public boolean cancelQueued(Object id, String reason, ReasonCode code) {
        return transition(Transition.INITIAL_TO_CANCELED, TransactionState.INITIAL, new Document(Fields.ID, id),
                new Document(Fields.REASON, reason).append(Fields.CODE, code.name()),
                new FindOneAndUpdateOptions().projection(Projections.include(Fields.ID))) != null;
    }

    /** The transaction claimed with {@code token} and still pending under its first owner, or null (a scan: only after a lost answer). */
    public Document claimedWith(String token) {
        return transactions.find(new Document(Fields.TOKEN, token).append(Fields.EPOCH, 1L)
                .append(Fields.STATE, in(TransactionState.PENDING))).projection(Projections.exclude("__none")).first();
    }

    /**
     * Adds {@code {action, by, at}} to transaction {@code id}'s {@code actions} (the last 20 kept),
     * touching nothing else (its lastModified stays: a note is not a sign of life of its owner).
     */
    public boolean note(Object id, String action, String by, Instant at) {
        Document entry = new Document("action", action).append("by", by).append("at", Date.from(at));
        return transactions.updateOne(new Document(Fields.ID, id), new Document("$push", new Document(Fields.ACTIONS,
                new Document("$each", List.of(entry)).append("$slice", -20)))).getMatchedCount() == 1;
    }

    /** Ended transactions that note inserts in doubt (see WritesInDoubt), at most {@code limit}. */
    public List<Document> withInsertsInDoubt(int limit) {
        return transactions.find(new Document(Fields.INSERTS_IN_DOUBT, new Document("$exists", true))
                        .append(Fields.STATE, new Document("$in", terminal())))
                .projection(Projections.exclude("__none")).limit(limit).into(new ArrayList<>());
    }

    /** Every spelling of the terminal states. */
    public static List<String> terminal() {
        List<String> terminal = new ArrayList<>(TransactionState.DONE.spellings());
        terminal.addAll(TransactionState.CANCELED.spellings());
        return terminal;
    }

    /** The transactions with these ids that exist, in one request (shared with other threads' reads at the same moment). */
    public List<Document> findAll(List<Object> ids) {
        return byIds.apply(ids);
    }

    /** The transaction {@code id}, or null (read in a request shared with other threads' reads at the same moment). */
    public Document find(Object id) {
        List<Document> found = byIds.apply(List.of(id));
        return found.isEmpty() ? null : found.get(0);
    }

    /**
     * An insert-if-absent of {@code id}'s document ({@code filter} and {@code update} of an upsert)
     * sent on its own: the document it inserted, or the one that had the id already (read after a
     * duplicate key). Throws {@link WriteInDoubtException} if neither is there.
     */
    public Document insertOrFind(Object id, Document filter, Document update) {
        Document stored;
        try {
            stored = transactions.findOneAndUpdate(filter, update, new FindOneAndUpdateOptions().upsert(true)
                    .returnDocument(ReturnDocument.AFTER).projection(Projections.exclude("__none")));
        } catch (MongoServerException e) {
            if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
            stored = find(id);
        }
        if (stored == null) {
            throw new WriteInDoubtException("transaction " + id + ": its document was neither inserted nor found");
        }
        return stored;
    }

    /**
     * Open transactions in {@code states} not modified since {@code staleBefore} (server time), in
     * the server's natural order (no sort: without an index a sort of up to {@code limit} whole
     * transactions could pass a server's in-memory sort limit; recovery skips what it cannot finish).
     */
    public List<Document> stale(List<TransactionState> states, Instant staleBefore, int limit) {
        List<String> spellings = new ArrayList<>();
        states.forEach(s -> spellings.addAll(s.spellings()));
        Bson filter = new Document(Fields.STATE, new Document("$in", spellings))
                .append("$or", List.of(
                        new Document(Fields.LAST_MODIFIED, notAfter(staleBefore)),
                        new Document(Fields.LAST_MODIFIED, new Document("$exists", false))));
        return transactions.find(filter).projection(Projections.exclude("__none")).limit(limit).into(new ArrayList<>());
    }

    /**
     * {@code <= instant} at the millisecond precision of BSON dates, written as {@code < instant + 1ms}:
     * mongo-java-server 1.47 does not match a date stamped by $currentDate by equality, so $lte would
     * miss a transaction modified in the very millisecond of the bound.
     */
    public static Document notAfter(Instant instant) {
        return new Document("$lt", Date.from(instant.truncatedTo(ChronoUnit.MILLIS).plusMillis(1)));
    }

    public static Document in(TransactionState state) {
        return new Document("$in", state.spellings());
    }

    public static TransactionState stateOf(Document transaction) {
        Object raw = transaction.get(Fields.STATE);
        return TransactionState.parse(raw instanceof String s ? s : null).orElseThrow(() -> new IllegalStateException(
                "transaction " + transaction.get(Fields.ID) + " has an unknown state " + raw));
    }

    /** The lease its owner holds it under, or null for a transaction written by others (the tutorial). */
    public static Long leaseOf(Document transaction) {
        Object lease = transaction.get(Fields.LEASE_MS);
        return lease instanceof Number n ? n.longValue() : null;
    }

    public static long epochOf(Document transaction) {
        Object epoch = transaction.get(Fields.EPOCH);
        return epoch instanceof Number n ? n.longValue() : 0L;
    }
}
