package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DocumentWithPosition;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Date;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * A collection held in memory that never changes a stored document in place, looks {@code _id}
 * up before applying the rest of a filter, and reports every change to a {@link Journal}.
 *
 * <p>Why copy-on-write: upstream updates mutate the stored document field by field while another
 * request may be serializing the same object outside the collection lock (a torn read). Here every
 * query hands out deep copies, upstream's in-place update therefore mutates a private copy, and
 * {@link #handleUpdate} swaps that copy in as the new stored document. Stored documents are thus
 * immutable, which also lets the log encode them later without a lock.
 *
 * <p>Thread-safe: all mutations run under the collection's monitor (upstream's synchronized methods).
 */
final class DurableCollection extends AbstractSynchronizedMongoCollection<Integer> {
    /** The empty filter; never changed. */
    private static final Document MATCHES_ALL = new Document();

    private final List<Document> documents = new ArrayList<>();
    private final ArrayDeque<Integer> freePositions = new ArrayDeque<>();
    private final Journal journal;
    private volatile boolean dropped;

    DurableCollection(MongoDatabase database, String name, CollectionOptions options,
                      CursorRegistry cursorRegistry, Journal journal) {
        super(database, name, options, cursorRegistry);
        this.journal = journal;
    }

    void markDropped() {
        dropped = true;
    }

    private void record(LogRecord record) {
        if (!dropped) {
            journal.append(record);
        }
    }

    /**
     * Upstream would encode every updated document twice (before and after) to keep a running
     * total for collection statistics; here the total is computed when statistics are asked for.
     */
    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    @Override
    protected void updateDataSize(int sizeDelta) {
        // not tracked: see tracksDataSize()
    }

    /** The encoded size of every stored document, summed now (collection statistics, validate). */
    @Override
    protected synchronized int getDataSize() {
        ByteBuf buffer = Unpooled.buffer();
        try {
            long total = 0;
            for (Document document : documents) {
                if (document != null) {
                    buffer.clear();
                    BsonEncoder.encodeDocument(document, buffer);
                    total += buffer.writerIndex();
                }
            }
            return (int) Math.min(Integer.MAX_VALUE, total);
        } finally {
            buffer.release();
        }
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
        Integer position = freePositions.poll();
        if (position == null) {
            position = documents.size();
            documents.add(document);
        } else {
            documents.set(position, document);
        }
        record(LogRecord.put(getDatabaseName(), getCollectionName(), document));
        return position;
    }

    @Override
    protected void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
        // newDocument is the private copy the query handed out, now updated: it becomes the stored one.
        documents.set(position, newDocument);
        record(LogRecord.put(getDatabaseName(), getCollectionName(), newDocument));
    }

    @Override
    protected void removeDocument(Integer position) {
        Document removed = documents.set(position, null);
        freePositions.add(position);
        if (removed != null) {
            String idField = getIdField() == null ? "_id" : getIdField();
            record(LogRecord.delete(getDatabaseName(), getCollectionName(), idField, removed.get(idField)));
        }
    }

    @Override
    protected Document getDocument(Integer position) {
        return documents.get(position);
    }

    @Override
    protected Integer findDocumentPosition(Document document) {
        for (int i = 0; i < documents.size(); i++) {
            Document candidate = documents.get(i);
            if (candidate != null && candidate.equals(document)) {
                return i;
            }
        }
        return null;
    }

    @Override
    protected Stream<DocumentWithPosition<Integer>> streamAllDocumentsWithPosition() {
        return IntStream.range(0, documents.size())
                .filter(i -> documents.get(i) != null)
                .mapToObj(i -> new DocumentWithPosition<>(documents.get(i), i));
    }

    @Override
    public synchronized int count() {
        return documents.size() - freePositions.size();
    }

    @Override
    public synchronized int count(Document query, int skip, int limit) {
        return super.count(query, skip, limit);
    }

    @Override
    public synchronized boolean isEmpty() {
        return count() == 0;
    }

    /**
     * Builds the index under the collection's lock: upstream does not take it, so documents
     * inserted while a unique index was being built were neither checked nor indexed (and the data
     * folder then held duplicates it could not reopen with).
     */
    @Override
    public synchronized void addIndex(Index<Integer> index) {
        super.addIndex(index);
    }

    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit,
                                         int batchSize, Document fieldSelector) {
        Stream<Document> all = (isNaturalDescending(orderBy)
                ? IntStream.iterate(documents.size() - 1, i -> i >= 0, i -> i - 1)
                : IntStream.range(0, documents.size()))
                .mapToObj(documents::get)
                .filter(d -> d != null);
        return matchDocumentsFromStream(all, query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /** The clauses of the library's writes are answered by {@link SimpleMatcher}; any other filter by upstream. */
    @Override
    protected boolean documentMatchesQuery(Document document, Document query) {
        Boolean simple = SimpleMatcher.matches(document, query);
        return simple != null ? simple : super.documentMatchesQuery(document, query);
    }

    /**
     * Filters the stored documents and hands out deep copies (see the class comment); the copies
     * are taken under the collection lock, so each is one consistent version. Upstream's method
     * then sorts, skips, limits and projects them; it would also match each copy against the
     * query again (its only use of the query), so it gets an empty one.
     */
    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documentStream, int numberToSkip,
                                                   int limit, int batchSize, Comparator<Document> documentComparator,
                                                   Document fieldSelector) {
        Stream<Document> copies = documentStream
                .filter(document -> documentMatchesQuery(document, query))
                .map(Document::cloneDeeply);
        return super.matchDocumentsFromStream(MATCHES_ALL, copies, numberToSkip, limit, batchSize, documentComparator,
                fieldSelector);
    }

    /**
     * A filter with {@code _id} equality or {@code _id: {$in: [...]}} (plus any other conditions)
     * looks the documents up in the {@code _id} index and applies the whole filter to them alone,
     * instead of scanning. Upstream only uses an index when the filter is exactly {@code {_id: v}}.
     */
    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit,
                                         int batchSize, Document fieldSelector) {
        String idField = getIdField();
        if (idField != null) {
            List<Object> ids = requiredIds(query, idField);
            Index<Integer> idIndex = ids == null ? null : idIndex(idField);
            if (idIndex != null) {
                TreeSet<Integer> positions = new TreeSet<>(); // stored order, as a scan would give
                for (Object id : ids) {
                    Integer position = idIndex.getPosition(new Document(idField, id));
                    if (position != null) {
                        positions.add(position);
                    }
                }
                List<Integer> inOrder = new ArrayList<>(isNaturalDescending(orderBy) ? positions.descendingSet() : positions);
                return matchDocuments(query, inOrder, orderBy, numberToSkip, limit, batchSize, fieldSelector);
            }
        }
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    private Index<Integer> idIndex(String idField) {
        for (Index<Integer> index : getIndexes()) {
            if (index.isUnique() && index.getKeys().size() == 1 && index.getKeys().get(0).getKey().equals(idField)) {
                return index;
            }
        }
        return null;
    }

    /**
     * The ids every matching document has one of: from a top-level {@code _id} equality or
     * {@code $in}, or one inside a top-level {@code $and} (the driver renders {@code Filters.and(...)}
     * that way). Null if none.
     */
    private static List<Object> requiredIds(Document query, String idField) {
        List<Object> ids = idValues(query.get(idField));
        if (ids == null && query.get("$and") instanceof List<?> clauses) {
            for (Object clause : clauses) {
                if (clause instanceof Document document) {
                    ids = requiredIds(document, idField);
                    if (ids != null) {
                        return ids;
                    }
                }
            }
        }
        return ids;
    }

    /**
     * The values an {@code _id} condition requires equality with one of, or null unless it is a
     * plain equality, {@code $eq} or an {@code $in} of plain values.
     */
    private static List<Object> idValues(Object condition) {
        if (condition instanceof Document document) {
            if (document.size() == 1 && document.containsKey("$eq")) {
                Object value = plainValue(document.get("$eq"));
                return value == null ? null : List.of(value);
            }
            if (document.size() == 1 && document.get("$in") instanceof Collection<?> values) {
                List<Object> ids = new ArrayList<>(values.size());
                for (Object value : values) {
                    Object plain = plainValue(value);
                    if (plain == null) {
                        return null;
                    }
                    ids.add(plain);
                }
                return ids;
            }
            return null;
        }
        Object value = plainValue(condition);
        return value == null ? null : List.of(value);
    }

    private static Object plainValue(Object value) {
        return value instanceof String || value instanceof Integer || value instanceof Long
                || value instanceof ObjectId || value instanceof UUID || value instanceof Date
                || value instanceof Instant ? value : null;
    }
}
