package io.mongo2pc;

import com.mongodb.client.MongoClient;
import io.mongo2pc.testing.CommandsTo;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class ReadByIdsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionManager manager() {
        return TestManagers.builder(mongo.client(), mongo.database(), "reads").build();
    }

    @Test
    void readByIds_givesTheDocumentsThatExist_withTheirIdAndTheFieldsAsked_comparedAsMongoDbComparesIds() {
        mongo.client().getDatabase(mongo.database()).getCollection("things").insertMany(List.of(
                new Document("_id", 1).append("balance", 5L).append("other", "x"), new Document("_id", "a").append("balance", 7L)));

        List<Document> found = manager().readByIds("default", mongo.database(), "things", List.of(1L, "a", "b", 2),
                List.of("balance"));

        assertThat(found).containsExactlyInAnyOrder(new Document("_id", 1).append("balance", 5L),
                new Document("_id", "a").append("balance", 7L));
    }

    @Test
    void readByIds_concurrentCallers_eachGetOnlyTheirOwnDocuments() throws Exception {
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 200; i += 2) {
            docs.add(new Document("_id", "d" + i));
        }
        mongo.client().getDatabase(mongo.database()).getCollection("things").insertMany(docs);
        TransactionManager manager = manager();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<List<Document>>> answers = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                List<Object> asked = List.of("d" + (2 * i), "d" + (2 * i + 1));
                answers.add(pool.submit(() -> manager.readByIds("default", mongo.database(), "things", asked, List.of())));
            }
            for (int i = 0; i < 100; i++) {
                assertThat(answers.get(i).get()).as("caller %d", i).containsExactly(new Document("_id", "d" + (2 * i)));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void readByIds_concurrentCallersOfOneDocument_shareRequests_eachGetsItsOwnCopy() throws Exception {
        // given one document, and a manager that sends one combined request at a time, so that callers queue and share
        mongo.client().getDatabase(mongo.database()).getCollection("things").insertOne(
                new Document("_id", "hot").append("balance", 5L).append("lines", new ArrayList<>(List.of(new Document("n", 1)))));
        AtomicInteger finds = new AtomicInteger();
        try (MongoClient counting = CommandsTo.client(mongo.uri(), "things", (name, command) -> {
            if (name.equals("find")) {
                finds.incrementAndGet();
            }
        })) {
            TransactionManager manager = TestManagers.builder(counting, mongo.database(), "reads").combinedRequestsInFlight(1).build();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                // when 400 callers read it at once, each changing what it got
                List<Future<Document>> answers = new ArrayList<>();
                for (int i = 0; i < 400; i++) {
                    int caller = i;
                    answers.add(pool.submit(() -> {
                        Document doc = manager.readByIds("default", mongo.database(), "things", List.of("hot"), List.of("balance", "lines")).get(0);
                        doc.put("balance", (long) caller);
                        doc.getList("lines", Document.class).get(0).put("n", caller);
                        return doc;
                    }));
                }
                // then each holds only its own change: no two callers were handed one document, nor one embedded in it
                Set<Document> distinct = Collections.newSetFromMap(new IdentityHashMap<>());
                for (int i = 0; i < 400; i++) {
                    Document doc = answers.get(i).get();
                    assertThat(doc.getLong("balance")).as("caller %d", i).isEqualTo(i);
                    assertThat(doc.getList("lines", Document.class).get(0).getInteger("n")).as("caller %d", i).isEqualTo(i);
                    distinct.add(doc);
                }
                assertThat(distinct).hasSize(400);
                assertThat(finds.get()).as("finds for 400 callers: shared").isLessThan(400);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
