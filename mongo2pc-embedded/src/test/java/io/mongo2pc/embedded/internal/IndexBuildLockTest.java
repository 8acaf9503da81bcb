package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (found in review): upstream builds an index without the collection's lock, so a
 * large insert running meanwhile put documents that were neither checked against a new unique
 * index nor added to it; on disk the folder then held duplicates it could not be reopened with
 * (reproduced with 100,000-document inserts racing createIndex). Writes hold the collection's
 * lock, so building under it too keeps them apart; this test checks exactly that.
 */
class IndexBuildLockTest {

    @Test
    @SuppressWarnings("unchecked")
    void buildingAnIndex_waitsForTheWriteHoldingTheCollection() throws Exception {
        DurableBackend backend = DurableBackend.inMemory();
        MongoCollection<Integer> collection = (MongoCollection<Integer>) backend.resolveDatabase("db").createCollectionOrThrowIfExists("c");
        collection.addDocument(new Document("_id", 1).append("k", "x"));
        CompletableFuture<Void> build;
        synchronized (collection) { // as a running insert holds it
            build = CompletableFuture.runAsync(() ->
                    collection.addIndex(new UniqueIndex("k_1", List.of(new IndexKey("k", true)), false)));
            Thread.sleep(300);
            assertThat(build).as("index build while a write holds the collection").isNotDone();
        }
        build.get(10, TimeUnit.SECONDS);
        assertThat(collection.getIndexes()).extracting(index -> index.getName()).contains("k_1");
        backend.close();
    }
}
