package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

import java.util.List;

/**
 * A database of {@link DurableCollection}s that also reports collection and index changes to the
 * journal. The {@code system.*} collections upstream keeps for namespaces and index descriptions
 * are not journaled: recovery rebuilds them by creating the collections and indexes again.
 *
 * <p>Thread-safe (upstream's synchronized database).
 */
final class DurableDatabase extends AbstractSynchronizedMongoDatabase<Integer> {

    private static final String ID_INDEX_NAME = "_id_";

    private final Journal journal;

    DurableDatabase(String name, CursorRegistry cursorRegistry, Journal journal) {
        super(name, cursorRegistry);
        this.journal = journal;
        initializeNamespacesAndIndexes();
    }

    private static boolean isSystem(String collectionName) {
        return collectionName.startsWith("system.");
    }

    @Override
    protected MongoCollection<Integer> openOrCreateCollection(String collectionName, CollectionOptions options) {
        // journal is null only while the superclass constructor runs (it creates no collections)
        Journal target = journal == null || isSystem(collectionName) ? Journal.NONE : journal;
        DurableCollection collection = new DurableCollection(this, collectionName, options, cursorRegistry, target);
        Document description = new Document();
        if (options.getIdField() != null) {
            description.put("idField", options.getIdField());
        }
        target.append(new LogRecord(LogRecord.Type.CREATE_COLLECTION, databaseName, collectionName, description));
        return collection;
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                     boolean sparse) {
        return new UniqueIndex(indexName, keys, sparse);
    }

    @Override
    protected synchronized void addIndex(Document indexDescription) {
        super.addIndex(indexDescription);
        String collectionName = collectionOf(indexDescription);
        if (collectionName != null && !ID_INDEX_NAME.equals(indexDescription.get("name")) && !isSystem(collectionName)) {
            journal.append(new LogRecord(LogRecord.Type.ADD_INDEX, databaseName, collectionName, indexDescription.cloneDeeply()));
        }
    }

    /** Recreates an index from its stored description (recovery). */
    void restoreIndex(Document indexDescription) {
        if (!ID_INDEX_NAME.equals(indexDescription.get("name"))) {
            super.addIndex(indexDescription.cloneDeeply());
        }
    }

    private String collectionOf(Document indexDescription) {
        Object ns = indexDescription.get("ns");
        String prefix = databaseName + ".";
        return ns instanceof String s && s.startsWith(prefix) ? s.substring(prefix.length()) : null;
    }

    @Override
    protected synchronized void dropIndex(MongoCollection<Integer> collection, String indexName) {
        // Under the collection's lock: a write the dropped index would have refused must not be
        // logged (and acknowledged) before the drop, or replay would meet it with the index in place.
        synchronized (collection) {
            super.dropIndex(collection, indexName);
            if (!isSystem(collection.getCollectionName())) {
                journal.append(new LogRecord(LogRecord.Type.DROP_INDEX, databaseName, collection.getCollectionName(),
                        new Document("name", indexName)));
            }
        }
    }

    @Override
    public synchronized void dropCollection(String collectionName, Oplog oplog) {
        MongoCollection<Integer> collection = resolveCollection(collectionName, false);
        super.dropCollection(collectionName, oplog);
        if (collection instanceof DurableCollection durable) {
            durable.markDropped();
        }
        if (!isSystem(collectionName)) {
            journal.append(new LogRecord(LogRecord.Type.DROP_COLLECTION, databaseName, collectionName, null));
        }
    }

    @Override
    protected long getStorageSize() {
        return 0;
    }

    @Override
    protected long getFileSize() {
        return 0;
    }
}
