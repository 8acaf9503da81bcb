package io.mongo2pc.internal.wire;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.mongo2pc.internal.format.TwoRoundFields;
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
    private final AtomicInteger findCommands = new AtomicInteger();
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
                        } else if (event.getCommandName().equals("find")) {
                            findCommands.incrementAndGet();
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
        WriteCombiner combiner = new WriteCombiner(coll, 4);
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
        WriteCombiner combiner = new WriteCombiner(coll, 4);
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
    void aRequestWhereOneApplyWasRefused_answersEachMarkerWriteFromOneReadBack_andNothingElse() {
        coll.insertMany(List.of(
                new Document("_id", "a").append("balance", 100).append("m", List.of()),
                new Document("_id", "b").append("balance", 5).append("m", List.of()),
                new Document("_id", "c").append("balance", 0).append("m", List.of("t3")),
                new Document("_id", "d").append("n", 0)));
        WriteCombiner combiner = new WriteCombiner(coll, 1);
        UpdateOneModel<Document> applyA = apply("a", "t1", 10);
        updateCommands.set(0);
        findCommands.set(0);

        List<WriteCombiner.Answer> answers = combiner.send(List.of(
                List.of(applyA),
                List.of(apply("b", "t2", 10)), // the guard refuses it: balance 5 < 10
                List.of(new UpdateOneModel<>(new Document("_id", "c").append("m", "t3"), new Document("$pull", new Document("m", "t3")))),
                List.of(new UpdateOneModel<>(new Document("_id", "d"), new Document("$inc", new Document("n", 1)))),
                List.of(apply("a", "t9", 1000)))); // refused by its guard, beside a's own apply

        assertThat(answers).containsExactly(
                WriteCombiner.Answer.MATCHED,    // marker t1 on a
                WriteCombiner.Answer.NOT_KNOWN,  // no marker t2 on b: its writer settles it
                WriteCombiner.Answer.MATCHED,    // marker t3 gone from c
                WriteCombiner.Answer.NOT_KNOWN,  // an $inc shows nothing to read back
                WriteCombiner.Answer.NOT_KNOWN); // no marker t9 on a
        assertThat(updateCommands.get()).as("update requests").isEqualTo(1);
        assertThat(findCommands.get()).as("read-back requests").isEqualTo(1);
        assertThat(coll.find(new Document("_id", "b")).first().getInteger("balance")).isEqualTo(5);

        // A copy of an apply that already took effect matches nothing, and reads as in effect:
        // its marker is there, put by its first copy (the engine's own path concludes the same).
        assertThat(combiner.send(List.of(List.of(applyA), List.of(apply("b", "t4", 10)))))
                .containsExactly(WriteCombiner.Answer.MATCHED, WriteCombiner.Answer.NOT_KNOWN);
        assertThat(coll.find(new Document("_id", "a")).first().getInteger("balance")).isEqualTo(90);

        // all matched: no read back
        findCommands.set(0);
        assertThat(combiner.send(List.of(List.of(apply("a", "t5", 1)), List.of(apply("b", "t6", 1)))))
                .containsOnly(WriteCombiner.Answer.MATCHED);
        assertThat(findCommands.get()).isZero();
    }

    @Test
    void manyThreadsApplyingUntilTheirGuardsRefuse_eachMatchedIsAnApplyInEffect() throws Exception {
        int threads = 16;
        int perThread = 150;
        int amount = 7;
        for (int t = 0; t < threads; t++) {
            coll.insertOne(new Document("_id", "acc" + t).append("balance", 700).append("m", List.of()));
        }
        WriteCombiner combiner = new WriteCombiner(coll, 4);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Integer>> applied = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String id = "acc" + t;
            applied.add(pool.submit(() -> {
                int inEffect = 0;
                for (int i = 0; i < perThread; i++) {
                    // the guard refuses from the 101st apply on: requests mix refused and applied writes
                    UpdateOneModel<Document> w = apply(id, id + "-" + i, amount);
                    if (combiner.answer(w) == WriteCombiner.Answer.MATCHED) {
                        assertThat(coll.countDocuments(new Document("_id", id).append("m", id + "-" + i)))
                                .as("an apply answered matched has its marker on the document").isEqualTo(1);
                        inEffect++;
                    } else if (coll.updateOne(w.getFilter(), w.getUpdate()).getMatchedCount() == 1) {
                        inEffect++; // settled on its own path, as the engine does
                    } else if (coll.countDocuments(new Document("_id", id).append("m", id + "-" + i)) == 1) {
                        inEffect++; // matched nothing alone because the combined copy did
                    }
                }
                return inEffect;
            }));
        }
        for (int t = 0; t < threads; t++) {
            int inEffect = applied.get(t).get(2, TimeUnit.MINUTES);
            Document account = coll.find(new Document("_id", "acc" + t)).first();
            assertThat(inEffect).isEqualTo(100);
            assertThat(account.getInteger("balance")).isEqualTo(700 - amount * inEffect);
            assertThat(account.getList("m", String.class)).hasSize(inEffect);
        }
        pool.shutdown();
    }

    /** An apply as the engine sends it: the guard, the marker absent, the debit and the marker in one write. */
    private static UpdateOneModel<Document> apply(String id, String tx, int amount) {
        return new UpdateOneModel<>(
                new Document("_id", id).append("m", new Document("$ne", tx)).append("balance", new Document("$gte", amount)),
                new Document("$inc", new Document("balance", -amount)).append("$push", new Document("m", tx)));
    }

    @Test
    void aFailedRequest_isUnknown_neverTrue() {
        coll.insertOne(new Document("_id", "text").append("n", "not a number"));
        WriteCombiner combiner = new WriteCombiner(coll, 4);
        // $inc of a text field is refused by the server: the request fails, the answer is unknown.
        assertThat(combiner.write(new UpdateOneModel<>(new Document("_id", "text"), new Document("$inc", new Document("n", 1)))))
                .isFalse();
    }
    /**
     * Commit inserts of several transactions share a request; one of them meets a document of its id
     * (a caller's id run again, a tombstone). The server (the embedded one as MongoDB) runs the
     * other writes of the unordered request after that write error, and none is told it is in
     * doubt (the request was answered) nor the duplicate that it took effect: each owner settles
     * its own on its own path (a duplicate key there finds the document and reads what it is).
     */
    @Test
    void unorderedRequestWithADuplicateKey_theOtherWritesRun_noneIsInDoubt_theDuplicateNeverTookEffect() {
        coll.insertOne(new Document("_id", "taken").append("state", "canceled"));
        WriteCombiner combiner = new WriteCombiner(coll, 1);

        List<WriteCombiner.Answer> answers = combiner.send(List.of(List.of(insertIfAbsent("taken")), List.of(insertIfAbsent("fresh"))));

        assertThat(answers.get(0)).isEqualTo(WriteCombiner.Answer.NOT_KNOWN);
        assertThat(answers.get(1)).isNotEqualTo(WriteCombiner.Answer.IN_DOUBT);
        assertThat(coll.find(new Document("_id", "fresh")).first()).as("the write after the duplicate ran").isNotNull()
                .containsEntry("state", "applied");
        assertThat(coll.find(new Document("_id", "taken")).first()).as("unchanged").containsEntry("state", "canceled");
    }

    /** A commit insert's shape: insert {@code id} already applied unless a document has the id. */
    private static UpdateOneModel<Document> insertIfAbsent(String id) {
        return new UpdateOneModel<>(TwoRoundFields.absent(id), new Document("$setOnInsert", new Document("state", "applied"))
                .append("$currentDate", new Document("insertedAt", true)), new UpdateOptions().upsert(true));
    }
}
