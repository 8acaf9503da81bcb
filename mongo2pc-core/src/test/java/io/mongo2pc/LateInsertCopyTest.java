package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A copy of an insert that the network delivers after its transaction has ended. Regression (found
 * by an independent check): the transaction [insert items/ghost, an increment whose guard never
 * holds] ran with a lease of 1 s and a socket timeout of 300 ms while the network held the insert
 * for 3 s; the owner waited out the insert's deadline, retried, was refused by the guard, undid the
 * insert and canceled; then the held copy created {@code {_m2pc: {tx, kind: insert, until, at},
 * pendingTransactions: [tx], v: 0}}. Read-committed showed it as absent, but a plain find returned
 * it, recovery left it and it kept its marker for good. Recovery now removes what a late copy of an
 * insert leaves once its transaction has ended.
 */
class LateInsertCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void lateCopyOfAnInsert_landingAfterItsTransactionWasCanceled_isRemovedByRecovery() throws Exception {
        String db = mongo.database();
        MongoCollection<Document> items = mongo.client().getDatabase(db).getCollection("items");
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(
                new Document("_id", "A").append("balance", 10L).append("pendingTransactions", List.of()));
        DocumentRef ghost = DocumentRef.of(db, "items", "ghost");
        DocumentRef account = DocumentRef.of(db, "accounts", "A");
        AtomicInteger held = new AtomicInteger();
        TransactionOutcome outcome;
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient(300)) {
            TransactionManager owner = TransactionManager.builder().target("default", viaProxy).database(db)
                    .application("owner").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                    .retryTimeout(Duration.ofSeconds(10)).build();
            // the network holds the insert's findAndModify for 6 s (a loaded machine may take 3 s to cancel); the driver gives up after 300 ms
            proxy.runBefore(request -> request.contains("findAndModify") && request.contains("items"), () -> {
                held.incrementAndGet();
                sleep(6_000);
            });

            long start = System.nanoTime();
            outcome = owner.run(List.of(
                    Operation.insert(ghost, new Document("v", 0L)),
                    Operation.increment(account, "balance", 1L, new Document("balance", new Document("$gte", 1_000_000L)))));
            long tookMs = (System.nanoTime() - start) / 1_000_000;

            assertThat(held).as("the insert was held").hasValue(1);
            assertThat(outcome.state()).as(outcome.reason()).isEqualTo(TransactionState.CANCELED);
            assertThat(tookMs).as("canceled before the held copy landed").isLessThan(6_000L);
            // the held copy reaches the server about 6 s after it was sent
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (items.find(new Document("_id", "ghost")).first() == null && System.nanoTime() < until) {
                Thread.sleep(50);
            }
        }
        assertThat(items.find(new Document("_id", "ghost")).first()).as("what the late copy created").isNotNull();

        TransactionManager other = TransactionManager.builder().target("default", mongo.newClient()).database(db)
                .application("recoverer").build();
        other.recover();

        assertThat(items.find(new Document("_id", "ghost")).first()).as("the late copy's document after recovery").isNull();
        assertThat(other.readCommitted(ghost)).isEmpty();
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", outcome.id()))
                .first().getString("state")).isEqualTo("canceled");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
