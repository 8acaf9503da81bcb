package io.mongo2pc.regression;

import io.mongo2pc.testing.TestManagers;
import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TwoAccounts;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An owner paused with its prepares landed and its transaction document not yet inserted, past its
 * deadline: a resolver cancels the transaction behind a tombstone and undoes the prepares, and the
 * tombstone is pruned. Then the owner inserts its document (late), finds the answer of one prepare
 * lost, and renews its lease to send that prepare again. Regression (found by the model check): the
 * renewal matched the late document and the prepare landed again, after the cancel. A renewal of a
 * pending document now requires it inserted before its deadline.
 */
class LateInsertRenewalTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void ownerWhoseInsertLandedAfterItsTombstoneWasPruned_sendsNoPrepareAfterTheCancel() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        MongoCollection<Document> accounts = two.collection();
        DocumentRef a = two.a();
        DocumentRef b = two.b();
        mongo.invariants().expectTotal(mongo.database(), 100L);
        MongoCollection<Document> transactions = mongo.transactions(mongo.database());
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicBoolean tombstoned = new AtomicBoolean();
        AtomicInteger preparesAfterTheCancel = new AtomicInteger();
        AtomicBoolean answerLost = new AtomicBoolean();
        CrashHook hook = (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.INSERT, -1)) && paused.getCount() > 0) {
                paused.countDown();
                await(resume);
            } else if (point.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && answerLost.compareAndSet(false, true)) {
                throw new MongoSocketReadException("the answer of the debit's prepare is lost", new ServerAddress());
            } else if (point.equals(CrashPoint.before(CrashPoint.Step.APPLY, 0)) && tombstoned.get()) {
                preparesAfterTheCancel.incrementAndGet();
            }
        };
        TransactionManager owner = TransactionManager.builder().finishInBackground(false).target("default", mongo.client())
                .database(mongo.database()).application("owner").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                .crashHook(hook).build();
        TransactionManager other = TransactionManager.builder().finishInBackground(false).target("default", mongo.newClient())
                .database(mongo.database()).application("other").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                .sweepPeriod(Duration.ZERO).build();

        CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run("t-1", List.of(
                Operation.increment(a, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(b, "balance", 10L, null))));
        assertThat(paused.await(30, TimeUnit.SECONDS)).as("the owner paused before its insert").isTrue();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((transactions.countDocuments(new Document("tombstone", true)) == 0 || balance(accounts, "A") != 100L)
                && System.nanoTime() < until) {
            Thread.sleep(200); // the sweep acts once the prepares' deadline plus the skew has passed
            other.recover(Duration.ZERO);
        }
        assertThat(balance(accounts, "A")).as("the resolver gave the hold back").isEqualTo(100L);
        tombstoned.set(true);
        assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("the tombstone pruned").isEqualTo(1L);
        resume.countDown();
        try {
            TransactionOutcome outcome = run.get(60, TimeUnit.SECONDS);
            assertThat(outcome.isCommitted()).as("outcome " + outcome).isFalse();
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(LeaseLostException.class);
        }

        assertThat(preparesAfterTheCancel).as("prepares the owner sent after the resolver canceled its transaction").hasValue(0);
        mongo.expireLeases(mongo.database());
        other.recover(Duration.ZERO);
        assertThat(List.of(balance(accounts, "A"), balance(accounts, "B"))).containsExactly(100L, 0L);
        assertThat(transactions.find(new Document("_id", "t-1")).first().getString("state")).isEqualTo("canceled");
    }

    private static long balance(MongoCollection<Document> accounts, String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
