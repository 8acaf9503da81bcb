package io.mongo2pc.regression;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The sweep of the two-round commit: the markers of a transaction whose document was never written
 * (its owner crashed in round 1) are found by no scan of the transactions collection, only by the
 * sweep of the participant collections.
 */
class TwoRoundSweepReviewTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    static final class Crash extends RuntimeException {
        Crash() {
            super("simulated crash");
        }
    }

    /**
     * 500 documents carry a marker of a transaction that is legitimately open (its owner's lease
     * runs for an hour: the sweep must leave them), and one more document carries the hold of a
     * transaction whose owner crashed before its insert. The sweep reads the first 500 documents
     * with markers and stops there, on every pass: the orphan's hold is never given back.
     */
    @Test
    void sweep_pastFiveHundredOpenMarkers_stillFindsTheOrphanHold() throws Exception {
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        List<Document> busy = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            busy.add(new Document("_id", String.format("a%03d", i)).append("balance", 0L).append("pendingTransactions", List.of("open")));
        }
        accounts.insertMany(busy);
        accounts.insertOne(new Document("_id", "z").append("balance", 100L).append("pendingTransactions", List.of()));
        accounts.insertOne(new Document("_id", "y").append("balance", 0L).append("pendingTransactions", List.of()));
        MongoCollection<Document> transactions = mongo.client().getDatabase(db).getCollection("transactions");
        transactions.insertOne(new Document("_id", "open").append("state", "pending").append("owner", "elsewhere")
                .append("epoch", 1L).append("leaseMs", Duration.ofHours(1).toMillis()).append("lastModified", new Date()));

        TransactionManager owner = TransactionManager.builder().target("default", mongo.client()).database(db)
                .application("owner").twoRoundCommit(true).lease(LEASE).maxClockSkew(SKEW)
                .crashHook((point, id) -> {
                    if (TestManagers.beforeTheDocument(point)) {
                        throw new Crash();
                    }
                }).build();
        DocumentRef z = DocumentRef.of(db, "accounts", "z");
        DocumentRef y = DocumentRef.of(db, "accounts", "y");
        assertThatThrownBy(() -> owner.run(List.of(
                Operation.increment(z, "balance", -100L, new Document("balance", new Document("$gte", 100L))),
                Operation.increment(y, "balance", 100L, null)))).isInstanceOf(Crash.class);
        assertThat(accounts.find(new Document("_id", "z")).first().getLong("balance")).as("the orphan's hold").isZero();

        // Past the orphan's deadline plus the skew (the embedded server's clock is this host's).
        Thread.sleep(LEASE.plus(SKEW).plusMillis(300).toMillis());
        TransactionManager recoverer = TransactionManager.builder().target("default", mongo.newClient()).database(db)
                .application("recoverer").lease(LEASE).maxClockSkew(SKEW).build();
        recoverer.recover(Duration.ZERO);
        recoverer.recover(Duration.ZERO);

        Document orphan = accounts.find(new Document("_id", "z")).first();
        assertThat(orphan.getLong("balance")).as("the orphan's hold given back by the sweep").isEqualTo(100L);
        assertThat(orphan.getList("pendingTransactions", Object.class)).isEmpty();
        assertThat(accounts.find(new Document("_id", "y")).first().getList("pendingTransactions", Object.class)).isEmpty();
        // The open transaction is not this test's: end it so that the invariants judge the rest.
        accounts.updateMany(new Document("pendingTransactions", "open"), new Document("$pull", new Document("pendingTransactions", "open")));
        transactions.deleteOne(new Document("_id", "open"));
    }
}
