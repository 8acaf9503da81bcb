package io.mongo2pc.interactive;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Round 1 of an interactive commit sends its writes at once, the last from the caller's thread. When
 * that one fails, the failure leaves round 1 only once every other write has answered: none is still
 * on its way when the caller (or a recovery after a crash) looks at the documents.
 */
class RoundOneFailureTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void lastWriteFails_theOtherWritesHaveAllAnswered_whenTheFailureLeavesRoundOne() {
        MongoCollection<Document> docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.insertOne(new Document("_id", "a").append("n", 1L));
        docs.insertOne(new Document("_id", "b").append("n", 2L));
        CrashPoint last = CrashPoint.before(Step.APPLY, 2);
        TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "round-one").finishInBackground(false)
                .crashHook((point, id) -> {
                    if (point.step() == Step.APPLY && point.phase() == CrashPoint.Phase.BEFORE && point.participant() < 2) {
                        sleep(300); // the sender threads' writes are slow to go out
                    }
                    if (point.equals(last)) {
                        throw new SimulatedCrash(point, id);
                    }
                }).build();

        assertThatThrownBy(() -> tm.transact(ctx -> {
            ctx.update(DocumentRef.of(mongo.database(), "docs", "a"), new Document("$set", new Document("n", 10L)));
            ctx.update(DocumentRef.of(mongo.database(), "docs", "b"), new Document("$set", new Document("n", 20L)));
            ctx.insert(DocumentRef.of(mongo.database(), "docs", "c"), new Document("n", 30L));
            return null;
        })).isInstanceOf(SimulatedCrash.class);

        // No waiting: what round 1 sent has landed, each under its lock, before the failure came out.
        assertThat(docs.find(new Document("_id", "a")).first()).containsKey("_m2pc");
        assertThat(docs.find(new Document("_id", "b")).first()).containsKey("_m2pc");
        tm.close();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
