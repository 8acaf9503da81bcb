package io.mongo2pc.regression;

import io.mongo2pc.testing.TestManagers;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TwoAccounts;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A copy of a transfer's first write (the insert of its transaction document) that the network
 * holds until the transfer is done and pruned. Regression: the copy inserted the document again,
 * before its deadline, and recovery rolled the pending transfer forward: it ran a second time
 * (A 80, B 20). Recovery now rolls a pending transaction forward only if every prepare is in
 * effect (the transfer's were released long ago), and cancels it otherwise; a copy that lands
 * after its deadline was already canceled as late.
 */
class PrunedLateInsertCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void lateCopyBeforeItsDeadline_afterTheTransferWasPruned_isCanceledByRecovery() throws Exception {
        run(Duration.ofSeconds(20), false);
    }

    @Test
    void lateCopyPastItsDeadline_afterTheTransferWasPruned_isCanceledByRecovery() throws Exception {
        run(Duration.ofSeconds(2), true);
    }

    /** With {@code pastDeadline}, the copy is let go once the lease has passed, else at once. */
    private void run(Duration lease, boolean pastDeadline) throws Exception {
        String db = mongo.database();
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        MongoCollection<Document> accounts = two.collection();
        DocumentRef a = two.a();
        DocumentRef b = two.b();
        mongo.invariants().expectTotal(db, 100L);
        MongoCollection<Document> transactions = mongo.transactions(db);
        AtomicInteger held = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        TransactionManager other = TransactionManager.builder().target("default", mongo.newClient()).database(db)
                .application("other").finishInBackground(false).lease(lease).maxClockSkew(Duration.ofMillis(100)).build();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient(300)) {
            TransactionManager owner = TransactionManager.builder().target("default", viaProxy).database(db)
                    .application("owner").commitInsert(false).finishInBackground(false).lease(lease).maxClockSkew(Duration.ofMillis(100))
                    .retryTimeout(Duration.ofSeconds(10)).build();
            // The network holds the first copy of the document's insert until the test lets it go; the driver gives up after 300 ms.
            proxy.runBefore(request -> request.contains("insertedAt") && request.contains("$setOnInsert"), () -> {
                held.incrementAndGet();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });

            TransactionOutcome outcome = owner.run("t-1", List.of(
                    Operation.increment(a, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                    Operation.increment(b, "balance", 10L, null)));

            assertThat(held).as("the insert was held").hasValue(1);
            assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
            assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("pruned right after the transfer").isEqualTo(1L);
            if (pastDeadline) {
                Thread.sleep(lease.toMillis() + 200);
            }
            release.countDown();
            // The copy reaches the server now: a document under the transfer's id again.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (transactions.find(new Document("_id", "t-1")).first() == null && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            assertThat(transactions.find(new Document("_id", "t-1")).first()).as("what the late copy inserted").isNotNull();
        }
        mongo.expireLeases(db);
        other.recover(Duration.ZERO);

        assertThat(List.of(balance(accounts, "A"), balance(accounts, "B"))).as("the transfer moved 10 once")
                .containsExactly(90L, 10L);
        assertThat(transactions.find(new Document("_id", "t-1")).first().getString("state"))
                .as("the late copy's transaction after recovery").isEqualTo("canceled");
    }

    private static long balance(MongoCollection<Document> accounts, String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }
}
