package io.mongo2pc;

import io.mongo2pc.testing.TestManagers;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.mongo2pc.CommitInserts.balances;
import static io.mongo2pc.CommitInserts.transfer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An owner paused around its commit insert (docs/COMMIT-INSERT.md, "The owner, step by step").
 * Paused before it past its deadline plus the skew, while another manager's sweep undoes its
 * prepares behind a tombstone: resumed, its insert meets the tombstone and it reports canceled; or,
 * the tombstone pruned meanwhile, its insert lands after the deadline and it reports canceled too
 * (the document repaired, nothing moved). Paused after it for longer than the lease, when its clock
 * bound can no longer tell when the insert ran: it reads the document back and reports committed.
 */
class CommitInsertPausedOwnerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(100);

    private static TransactionManager manager(String app, CrashHook hook) {
        return TransactionManager.builder().target("default", mongo.newClient()).database(mongo.database()).application(app)
                .finishInBackground(false).lease(LEASE).maxClockSkew(SKEW).retryTimeout(Duration.ofSeconds(10)).crashHook(hook).build();
    }

    private static Document transaction(Object id) {
        return mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
    }

    @Test
    void ownerPausedBeforeItsCommitInsert_sweepUndoesBehindATombstone_resumedOwnerReportsCanceled() throws Exception {
        pausedBefore(false);
    }

    @Test
    void ownerPausedBeforeItsCommitInsert_tombstonePruned_resumedOwnerInsertsLateAndReportsCanceled() throws Exception {
        pausedBefore(true);
    }

    private void pausedBefore(boolean prune) throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        MongoCollection<Document> accounts = two.collection();
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        TransactionManager owner = manager("owner", CommitInserts.pauseAt(CrashPoint.before(CrashPoint.Step.COMMIT, -1), paused, resume));
        // every recover sweeps: the second comes about a lease after the first, less the time round 1 took
        TransactionManager other = TransactionManager.builder().target("default", mongo.newClient()).database(mongo.database())
                .application("other").finishInBackground(false).lease(LEASE).maxClockSkew(SKEW).sweepPeriod(Duration.ZERO).build();
        CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run("t-1", transfer(two)));
        assertThat(paused.await(30, TimeUnit.SECONDS)).as("the owner paused with its prepares landed").isTrue();
        assertThat(CommitInserts.balance(accounts, "A")).as("the debit's hold").isEqualTo(90L);
        Instant until = CommitInserts.entryUntil(accounts, "A");
        other.recover(Duration.ZERO);
        if (Instant.now().isBefore(until)) { // the embedded server's clock is this host's
            assertThat(CommitInserts.balance(accounts, "A")).as("no resolver undoes a prepare before its deadline").isEqualTo(90L);
        }
        CommitInserts.awaitPast(until, SKEW.plusMillis(50));
        other.recover(Duration.ZERO);
        assertThat(transaction("t-1").getBoolean("tombstone")).as("the sweep's tombstone").isTrue();
        assertThat(balances(accounts)).as("undone behind the tombstone").containsExactly(100L, 0L);
        if (prune) {
            assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("the tombstone pruned").isEqualTo(1L);
        }
        resume.countDown();

        TransactionOutcome outcome = run.get(60, TimeUnit.SECONDS);
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        assertThat(balances(accounts)).as("nothing moved").containsExactly(100L, 0L);
        Document stored = transaction("t-1");
        assertThat(stored.getString("state")).isEqualTo("canceled");
        if (prune) {
            assertThat(stored.get("tombstone")).as("the owner's own document, inserted late").isNull();
            assertThat(stored.getDate("insertedAt")).isAfterOrEqualTo(stored.getDate("until"));
            assertThat(stored.getString("code")).as("repaired by its owner").isEqualTo(ReasonCode.TIMED_OUT.name());
        }
        assertThat(other.inspect("t-1").orElseThrow().state()).isEqualTo(TransactionState.CANCELED);
    }

    @Test
    void ownerPausedAfterItsCommitInsertLongerThanTheLease_readsItBack_reportsDone() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        TransactionManager owner = manager("owner", CommitInserts.pauseAt(CrashPoint.after(CrashPoint.Step.COMMIT, -1), paused, resume));
        CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run("t-1", transfer(two)));
        assertThat(paused.await(30, TimeUnit.SECONDS)).as("the owner paused after its commit insert").isTrue();
        Document inserted = transaction("t-1");
        assertThat(inserted.getString("state")).isEqualTo("applied");
        assertThat(inserted.getDate("insertedAt")).as("inserted in time").isBefore(inserted.getDate("until"));
        // Past the deadline plus the skew: the owner's bound of the server's clock cannot place the insert before it.
        CommitInserts.awaitPast(inserted.getDate("until").toInstant(), SKEW.plusMillis(100));
        resume.countDown();

        TransactionOutcome outcome = run.get(60, TimeUnit.SECONDS);
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(balances(two.collection())).as("moved once").containsExactly(90L, 10L);
        assertThat(transaction("t-1").getString("state")).isEqualTo("done");
    }
}
