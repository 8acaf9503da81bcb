package io.mongo2pc.internal.admin;

import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Projections;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionCodec;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.state.TransactionStore;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Lists stored transactions, newest first (most recently changed first; never stamped ones last),
 * with filters and pages that continue where the last one ended (see {@link ListCursor}). Reads
 * only. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class TransactionListing {
    private static final Document NEWEST_FIRST = new Document(Fields.LAST_MODIFIED, -1).append(Fields.ID, -1);
    private static final Document OLDEST_FIRST = new Document(Fields.LAST_MODIFIED, 1).append(Fields.ID, 1);
    private static final Document UNSTAMPED = new Document(Fields.LAST_MODIFIED, new Document("$exists", false));

    private final MongoCollection<Document> transactions;
    private final Supplier<Instant> serverTime;
    private final Function<Document, List<Operation>> operationsOf;
    private final List<TransactionCodec> codecs;

    /** {@code codecs} and {@code database} read the operations of documents without mongo2pc's {@code ops}. */
    public TransactionListing(MongoCollection<Document> transactions, Supplier<Instant> serverTime,
                              List<TransactionCodec> codecs, String database) {
        this.transactions = transactions;
        this.serverTime = serverTime;
        List<TransactionCodec> readers = List.copyOf(codecs);
        this.codecs = readers;
        this.operationsOf = doc -> StoredOperations.of(doc, readers, database);
    }

    public TransactionPage list(TransactionQuery query) {
        ListCursor cursor = query.after() == null ? null : ListCursor.decode(query.after());
        Instant now = serverTime.get();
        List<Bson> filters = filters(query, now);
        int skipped = 0;
        if (cursor != null && cursor.millis() != null) {
            // the cursor's own millisecond again: what of it the last page returned is skipped below
            filters.add(stampedNotAfterOrUnstamped(new Document("$lt", new Date(cursor.millis() + 1))));
            skipped = cursor.seen().size();
        } else if (cursor != null) {
            filters.add(UNSTAMPED);
        }
        Bson filter = filters.size() == 1 ? filters.get(0) : new Document("$and", filters);
        FindIterable<Document> found = transactions.find(filter).projection(Projections.exclude("__none")).sort(NEWEST_FIRST);
        if (cursor != null && cursor.millis() == null) {
            found = found.skip(cursor.unstamped());
        }
        List<Document> page = new ArrayList<>();
        boolean more = false;
        try (MongoCursor<Document> docs = found.limit(query.limit() + 1 + skipped).iterator()) {
            while (docs.hasNext()) {
                Document doc = docs.next();
                Long millis = millisOf(doc);
                if (cursor != null && cursor.millis() != null && cursor.millis().equals(millis)
                        && cursor.seen().contains(doc.get(Fields.ID))) {
                    continue;
                }
                if (page.size() == query.limit()) {
                    more = true;
                    break;
                }
                page.add(doc);
            }
        }
        List<TransactionView> views = new ArrayList<>(page.size());
        page.forEach(doc -> views.add(StoredTransactions.view(doc, operationsOf)));
        return new TransactionPage(views, more, more ? next(cursor, page).encode() : null, now);
    }

    /** How many stored transactions match {@code query}'s filters (its page size and cursor aside). */
    public long count(TransactionQuery query) {
        return transactions.countDocuments(new Document("$and", filters(query, serverTime.get())));
    }

    /** The filters of {@code query} at server time {@code now} (its cursor aside). */
    private List<Bson> filters(TransactionQuery query, Instant now) {
        List<Bson> filters = new ArrayList<>();
        filters.add(Pruning.notPruned()); // a pruned transaction's stub is its id and outcome only: not listed
        if (!query.states().isEmpty()) {
            filters.add(states(query.states()));
        }
        if (query.owner() != null) {
            filters.add(new Document(Fields.OWNER, query.owner()));
        }
        if (query.application() != null) {
            filters.add(new Document(Fields.APPLICATION, query.application()));
        }
        if (query.olderThan() != null) {
            filters.add(stampedNotAfterOrUnstamped(TransactionStore.notAfter(now.minus(query.olderThan()))));
        }
        if (query.changedFrom() != null) {
            filters.add(new Document(Fields.LAST_MODIFIED, new Document("$gte", Date.from(query.changedFrom()))));
        }
        if (query.changedTo() != null) {
            filters.add(new Document(Fields.LAST_MODIFIED, new Document("$lt", Date.from(query.changedTo()))));
        }
        if (query.touching() != null) {
            filters.add(touching(query.touching()));
        }
        return filters;
    }

    /** Transactions with an operation on a document of {@code _id} {@code id}: stored operations, or what a codec tells. */
    private Bson touching(Object id) {
        List<Object> ids = new ArrayList<>(List.of(id));
        if (id instanceof Integer i) {
            ids.add(i.longValue()); // MongoDB matches an int and a long of one value as one _id
        } else if (id instanceof Long l && l == l.intValue()) {
            ids.add(l.intValue());
        }
        Document in = new Document("$in", ids);
        List<Bson> any = new ArrayList<>(List.of(new Document(Fields.OPS + ".id", in)));
        for (TransactionCodec codec : codecs) {
            codec.touching(id).ifPresent(any::add);
        }
        return any.size() == 1 ? any.get(0) : new Document("$or", any);
    }

    /**
     * The transactions in one of {@code states} as they count ({@link LateCommit}): a commit written
     * after its deadline is listed as canceled, not as the applied or done it stores.
     */
    private static Bson states(Set<TransactionState> states) {
        List<String> spellings = new ArrayList<>();
        states.forEach(s -> spellings.addAll(s.spellings()));
        Document stored = new Document(Fields.STATE, new Document("$in", spellings));
        if (states.contains(TransactionState.APPLIED) || states.contains(TransactionState.DONE)) {
            stored.append("$nor", List.of(LateCommit.filter()));
        }
        return states.contains(TransactionState.CANCELED) ? new Document("$or", List.of(stored, LateCommit.filter())) : stored;
    }

    /** The open transaction changed least recently (never stamped ones first), if any. */
    public Optional<TransactionView> oldestOpen() {
        List<String> open = new ArrayList<>();
        TransactionState.open().forEach(s -> open.addAll(s.spellings()));
        Document oldest = transactions.find(new Document(Fields.STATE, new Document("$in", open))
                        .append("$nor", List.of(LateCommit.filter())))
                .projection(Projections.exclude("__none")).sort(OLDEST_FIRST).limit(1).first();
        return Optional.ofNullable(oldest).map(doc -> StoredTransactions.view(doc, operationsOf));
    }

    /** Where the next page starts: after the last of {@code page} (not empty), counting what {@code before} had skipped. */
    private static ListCursor next(ListCursor before, List<Document> page) {
        Long last = millisOf(page.get(page.size() - 1));
        if (last == null) {
            int unstamped = before != null && before.millis() == null ? before.unstamped() : 0;
            for (Document doc : page) {
                unstamped += millisOf(doc) == null ? 1 : 0;
            }
            return new ListCursor(null, List.of(), unstamped);
        }
        List<Object> seen = new ArrayList<>();
        if (before != null && last.equals(before.millis())) {
            seen.addAll(before.seen());
        }
        for (Document doc : page) {
            if (last.equals(millisOf(doc))) {
                seen.add(doc.get(Fields.ID));
            }
        }
        return new ListCursor(last, seen, 0);
    }

    private static Document stampedNotAfterOrUnstamped(Document bound) {
        return new Document("$or", List.of(new Document(Fields.LAST_MODIFIED, bound), UNSTAMPED));
    }

    private static Long millisOf(Document doc) {
        return doc.get(Fields.LAST_MODIFIED) instanceof Date d ? d.getTime() : null;
    }
}
