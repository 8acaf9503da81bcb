package io.mongo2pc;

import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
}
