package io.mongo2pc.internal;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit of writes: many threads' writes share requests, and each thread is told "took
 * effect" only when its own write did. A "true" that is wrong would let the engine believe an
 * apply, a commit or an insert happened when it did not.
 */
class WriteCombinerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private final AtomicInteger updateCommands = new AtomicInteger();
    private MongoClient client;
    private MongoCollection<Document> coll;

    @BeforeEach
    void setUp() {
        mongo.skipInvariants("writes raw documents, no transactions");
        client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(mongo.uri()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (event.getCommandName().equals("update")) {
                            updateCommands.incrementAndGet();
                        }
                    }
                }).build());
        coll = client.getDatabase(mongo.database()).getCollection("docs");
    }

    @AfterEach
    void tearDown() {
        client.close();
    }

    @Test
    void manyThreads_eachTrueIsItsOwnWriteTakingEffect_andWritesShareRequests() throws Exception {
        int threads = 16;
        int perThread = 200;
        for (int t = 0; t < threads; t++) {
            coll.insertOne(new Document("_id", "c" + t).append("n", 0));
        }
        WriteCombiner combiner = new WriteCombiner(coll);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<int[]>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String id = "c" + t;
            futures.add(pool.submit(() -> {
                int told = 0;
                int unknown = 0;
                for (int i = 0; i < perThread; i++) {
                    // Guarded like an apply: n must still be i. Every tenth write is sent twice;
                    // the second copy cannot match, which must never be reported as matched.
                    UpdateOneModel<Document> w = new UpdateOneModel<>(new Document("_id", id).append("n", i),
                            new Document("$inc", new Document("n", 1)));
                    boolean ok = combiner.write(w);
                    if (!ok) {
                        // Unknown: settle it as the engine does, on the single-request path.
                        unknown++;
                        coll.updateOne(w.getFilter(), w.getUpdate());
                    } else {
                        told++;
                    }
                    if (i % 10 == 0) {
                        assertThat(combiner.write(w)).as("a write that matches nothing reported as matched").isFalse();
                    }
                }
                return new int[]{told, unknown};
            }));
        }
        int told = 0;
        for (Future<int[]> f : futures) {
            told += f.get(2, TimeUnit.MINUTES)[0];
        }
        pool.shutdown();
        for (int t = 0; t < threads; t++) {
            assertThat(coll.find(new Document("_id", "c" + t)).first().getInteger("n")).isEqualTo(perThread);
        }
        int writes = threads * perThread + threads * (perThread / 10);
        assertThat(told).isPositive();
        assertThat(updateCommands.get()).as("update requests for " + writes + " writes (plus single retries)")
                .isLessThan(writes);
    }

    @Test
    void upserts_reportExactlyTheOnesThatInserted_evenBesideAnUpdateThatMatchedNothing() {
        coll.insertOne(new Document("_id", "exists").append("v", "old"));
        WriteCombiner combiner = new WriteCombiner(coll);
        UpdateOptions upsert = new UpdateOptions().upsert(true);
        assertThat(combiner.write(List.of(
                new UpdateOneModel<>(new Document("_id", "new1"), new Document("$setOnInsert", new Document("v", 1)), upsert),
                new UpdateOneModel<>(new Document("_id", "new2"), new Document("$setOnInsert", new Document("v", 2)), upsert))))
                .isTrue();
        assertThat(combiner.write(new UpdateOneModel<>(new Document("_id", "exists"),
                new Document("$setOnInsert", new Document("v", "new")), upsert)))
                .as("an upsert that found its document did not insert").isFalse();
        assertThat(combiner.write(List.of(
                new UpdateOneModel<>(new Document("_id", "new3"), new Document("$setOnInsert", new Document("v", 3)), upsert),
                new UpdateOneModel<>(new Document("_id", "missing"), new Document("$set", new Document("v", 0))))))
                .as("one of the two writes matched nothing").isFalse();
        assertThat(coll.countDocuments(new Document("_id", "new3"))).isEqualTo(1);
        assertThat(coll.find(new Document("_id", "exists")).first().getString("v")).isEqualTo("old");
        assertThat(combiner.write(new UpdateOneModel<>(new Document("_id", "exists"), new Document("$set", new Document("v", "x")))))
                .isTrue();
    }

    @Test
    void aFailedRequest_isUnknown_neverTrue() {
        coll.insertOne(new Document("_id", "text").append("n", "not a number"));
        WriteCombiner combiner = new WriteCombiner(coll);
        // $inc of a text field is refused by the server: the request fails, the answer is unknown.
        assertThat(combiner.write(new UpdateOneModel<>(new Document("_id", "text"), new Document("$inc", new Document("n", 1)))))
                .isFalse();
    }
}
