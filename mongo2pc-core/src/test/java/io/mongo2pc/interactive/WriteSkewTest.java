package io.mongo2pc.interactive;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two doctors on call: each transaction reads both doctors and takes itself off call if the other
 * is on. Both start at once, round after round, each with a manager of its own: at most one ever
 * goes off (no write skew), because the doctor only read is checked at the commit, after the write
 * is taken.
 */
class WriteSkewTest {
    private static final int ROUNDS = 60;

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void twoDoctorsOnCall_eachGoesOffIfTheOtherIsOn_neverBothOff() throws Exception {
        MongoCollection<Document> doctors = mongo.client().getDatabase(mongo.database()).getCollection("doctors");
        List<TransactionManager> managers = List.of(
                TestManagers.builder(mongo.client(), mongo.database(), "alice").build(),
                TestManagers.builder(mongo.newClient(), mongo.database(), "bob").build());
        List<String> names = List.of("alice", "bob");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CyclicBarrier together = new CyclicBarrier(2);
        int bothWentOff = 0;
        int oneWentOff = 0;
        for (int round = 0; round < ROUNDS; round++) {
            doctors.deleteMany(new Document());
            doctors.insertMany(List.of(new Document("_id", "alice").append("onCall", true), new Document("_id", "bob").append("onCall", true)));
            Future<?>[] runs = new Future<?>[2];
            for (int d = 0; d < 2; d++) {
                TransactionManager tm = managers.get(d);
                DocumentRef me = DocumentRef.of(mongo.database(), "doctors", names.get(d));
                DocumentRef other = DocumentRef.of(mongo.database(), "doctors", names.get(1 - d));
                runs[d] = pool.submit(() -> {
                    together.await();
                    return tm.transact(ctx -> {
                        boolean meOn = ctx.get(me).orElseThrow().getBoolean("onCall");
                        boolean otherOn = ctx.get(other).orElseThrow().getBoolean("onCall");
                        if (meOn && otherOn) {
                            ctx.update(me, new Document("$set", new Document("onCall", false)));
                            return true;
                        }
                        return false;
                    });
                });
            }
            for (Future<?> run : runs) {
                run.get();
            }
            managers.forEach(tm -> tm.awaitFinished(java.time.Duration.ofSeconds(10)));
            long off = doctors.countDocuments(new Document("onCall", false));
            bothWentOff += off == 2 ? 1 : 0;
            oneWentOff += off == 1 ? 1 : 0;
        }
        pool.shutdown();
        managers.forEach(TransactionManager::close);

        assertThat(bothWentOff).as("rounds in which both doctors went off call").isZero();
        assertThat(oneWentOff).as("rounds in which one went off").isEqualTo(ROUNDS);
    }
}
