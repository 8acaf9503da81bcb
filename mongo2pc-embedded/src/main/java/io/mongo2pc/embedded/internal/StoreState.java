package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The stored data as the log describes it: databases, collections (with their id field and index
 * descriptions) and documents by {@code _id}. Recovery builds it from a snapshot plus the log; the
 * log writer keeps applying records to it so a snapshot can be written at any log position
 * without stopping the server. Documents are shared with the live collections and never mutated.
 *
 * <p>Not thread-safe: owned by one thread at a time (recovery, then the flush leader of the moment).
 */
final class StoreState {

    static final class CollectionState {
        final String idField;
        final LinkedHashMap<Object, Document> documents;
        final LinkedHashMap<String, Document> indexes;

        CollectionState(String idField) {
            this(idField, new LinkedHashMap<>(), new LinkedHashMap<>());
        }

        private CollectionState(String idField, LinkedHashMap<Object, Document> documents,
                                LinkedHashMap<String, Document> indexes) {
            this.idField = idField;
            this.documents = documents;
            this.indexes = indexes;
        }

        CollectionState copy() {
            return new CollectionState(idField, new LinkedHashMap<>(documents), new LinkedHashMap<>(indexes));
        }
    }

    /** database -> collection -> state, in creation order. */
    final Map<String, Map<String, CollectionState>> databases = new LinkedHashMap<>();

    void apply(LogRecord record) {
        switch (record.type) {
            case CREATE_COLLECTION -> collections(record.database).computeIfAbsent(record.collection,
                    name -> new CollectionState(record.document.get("idField") instanceof String f ? f : null));
            case DROP_COLLECTION -> {
                Map<String, CollectionState> collections = databases.get(record.database);
                if (collections != null) {
                    collections.remove(record.collection);
                }
            }
            case PUT -> {
                CollectionState collection = collection(record);
                String idField = collection.idField == null ? "_id" : collection.idField;
                collection.documents.put(key(record.document.get(idField)), record.document);
            }
            case DELETE -> {
                CollectionState collection = collection(record);
                Object id = record.document.values().stream().findFirst().orElse(null);
                collection.documents.remove(key(id));
            }
            case ADD_INDEX -> collection(record).indexes.putIfAbsent((String) record.document.get("name"), record.document);
            case DROP_INDEX -> collection(record).indexes.remove((String) record.document.get("name"));
            case DROP_DATABASE -> databases.remove(record.database);
            case SNAPSHOT_END -> { }
            default -> throw new IllegalStateException("unexpected " + record.type);
        }
    }

    private Map<String, CollectionState> collections(String database) {
        return databases.computeIfAbsent(database, name -> new LinkedHashMap<>());
    }

    /** A record for a collection that was never created (e.g. created implicitly) creates it. */
    private CollectionState collection(LogRecord record) {
        return collections(record.database).computeIfAbsent(record.collection, name -> new CollectionState("_id"));
    }

    /** A shallow copy (documents are immutable and shared) consistent at the current log position. */
    StoreState copy() {
        StoreState copy = new StoreState();
        databases.forEach((db, collections) -> {
            Map<String, CollectionState> target = copy.collections(db);
            collections.forEach((name, state) -> target.put(name, state.copy()));
        });
        return copy;
    }

    /** The records that rebuild this state: per collection, its creation, its indexes, its documents. */
    void forEachRecord(Consumer<LogRecord> sink) {
        databases.forEach((db, collections) -> collections.forEach((name, state) -> {
            Document options = new Document();
            if (state.idField != null) {
                options.put("idField", state.idField);
            }
            sink.accept(new LogRecord(LogRecord.Type.CREATE_COLLECTION, db, name, options));
            state.indexes.values().forEach(index -> sink.accept(new LogRecord(LogRecord.Type.ADD_INDEX, db, name, index)));
            state.documents.values().forEach(doc -> sink.accept(LogRecord.put(db, name, doc)));
        }));
    }

    long documentCount() {
        long count = 0;
        for (Map<String, CollectionState> collections : databases.values()) {
            for (CollectionState state : collections.values()) {
                count += state.documents.size();
            }
        }
        return count;
    }

    /**
     * A map key equal for equal ids. Values with a value-based equals are used as they are; the
     * stored type of an id never changes (ids are immutable), so 1 and 1L never meet here.
     * Anything else (sub-documents, binary) is keyed by its BSON encoding.
     */
    /**
     * The key documents are kept under: equal for ids upstream's {@code _id} index takes as equal
     * (1, 1L and 1.0; 0.0 and -0.0; {@code {a: 1}} and {@code {a: 1L}}), since a replacement may
     * change an id's type without changing it.
     */
    static Object key(Object id) {
        if (id instanceof String || id instanceof ObjectId || id instanceof UUID) {
            return id; // left as they are by upstream's normalization
        }
        return new KeyValue(id).normalized();
    }

    static List<String> names(Map<String, ?> map) {
        return new ArrayList<>(map.keySet());
    }
}
