package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.mongo2pc.CommitInserts.balances;
import static io.mongo2pc.CommitInserts.transfer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A caller's id run twice when the two-round commit writes its document only at the commit point
 * (docs/COMMIT-INSERT.md, "What else changes"): only one insert of the id succeeds, and both calls
 * report that transaction's outcome; the money moves once, and the other run's prepares are undone
 * before its call returns. In both orders (either run commits while the other is in round 1), with
 * the second run's document written first (its prepares met the first's and it fell back to the
 * pending document), after the first finished, after the first was abandoned behind the sweep's
 * tombstone (the id's outcome is canceled), and against a run of the tutorial's rules. A
 * queued transaction is unchanged: its document exists before round 1 and it commits by the
 * compare-and-set.
 */
class CommitInsertIdRunTwiceTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static TransactionManagerBuilder builder(String app, CrashHook hook) {
        return TransactionManager.builder().target("default", mongo.newClient()).database(mongo.database()).application(app)
                .finishInBackground(false).lease(Duration.ofSeconds(10)).conflictTimeout(Duration.ofSeconds(30))
                .retryTimeout(Duration.ofSeconds(10)).crashHook(hook);
    }

    private static TransactionManager manager(String app, CrashHook hook) {
        return builder(app, hook).build();
    }

    private static Document transaction(Object id) {
        return mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
    }

    private TwoAccounts accounts() {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        return two;
    }

    @Test
    void idRunAgainAfterItFinished_returnsItsOutcome_andUndoesTheSecondRunsPrepares() {
        TwoAccounts two = accounts();
        assertThat(manager("first", CrashHook.NONE).run("t-1", transfer(two)).state()).isEqualTo(TransactionState.DONE);
        Set<CrashPoint> points = ConcurrentHashMap.newKeySet();
        TransactionOutcome again = manager("second", (p, id) -> points.add(p)).run("t-1", transfer(two));
        assertThat(points).as("the second run prepared, then its commit insert met the document")
                .contains(CrashPoint.after(CrashPoint.Step.APPLY, 0), CrashPoint.before(CrashPoint.Step.COMMIT, -1));
        assertThat(again.state()).isEqualTo(TransactionState.DONE);
        assertThat(balances(two.collection())).as("moved once, nothing of the second run left").containsExactly(90L, 10L);
    }

    @Test
    void idRunAgainAfterItsFirstRunWasAbandonedBehindATombstone_reportsCanceled_movesNothing() {
        TwoAccounts two = accounts();
        TransactionManager first = builder("first", (p, id) -> {
            if (p.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                throw new SimulatedCrash(p, id);
            }
        }).lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100)).build();
        assertThatThrownBy(() -> first.run("t-1", transfer(two))).isInstanceOf(SimulatedCrash.class);
        CommitInserts.awaitPast(CommitInserts.entryUntil(two.collection(), "A"), Duration.ofMillis(150));
        TransactionManager sweeper = builder("sweeper", CrashHook.NONE).lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100)).build();
        sweeper.recover(Duration.ZERO);
        assertThat(transaction("t-1").getBoolean("tombstone")).as("abandoned: the sweep's tombstone answers for the id").isTrue();

        TransactionOutcome again = sweeper.run("t-1", transfer(two));

        assertThat(again.state()).as("the id's outcome, not a second transaction").isEqualTo(TransactionState.CANCELED);
        assertThat(again.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        assertThat(balances(two.collection())).as("nothing moved, nothing of either run left").containsExactly(100L, 0L);
        assertThat(transaction("t-1").getBoolean("tombstone")).isTrue();
    }

    @Test
    void secondRunCommitsWhileTheFirstIsInRoundOne_theFirstReturnsItsOutcome() throws Exception {
        oneCommitsWhileTheOtherIsInRoundOne(true);
    }

    @Test
    void firstRunCommitsWhileTheSecondIsInRoundOne_theSecondReturnsItsOutcome() throws Exception {
        oneCommitsWhileTheOtherIsInRoundOne(false);
    }

    /** One run paused before its prepares while the other runs the id to the end; then resumed. */
    private void oneCommitsWhileTheOtherIsInRoundOne(boolean firstPaused) throws Exception {
        TwoAccounts two = accounts();
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        TransactionManager slow = manager(firstPaused ? "first" : "second",
                CommitInserts.pauseAt(CrashPoint.before(CrashPoint.Step.APPLY, 0), paused, resume));
        TransactionManager fast = manager(firstPaused ? "second" : "first", CrashHook.NONE);
        CompletableFuture<TransactionOutcome> slowRun = CompletableFuture.supplyAsync(() -> slow.run("t-1", transfer(two)));
        assertThat(paused.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(transaction("t-1")).as("no document during round 1").isNull();

        TransactionOutcome fastOutcome = fast.run("t-1", transfer(two));
        Object fastOwner = transaction("t-1").get("owner");
        resume.countDown();
        TransactionOutcome slowOutcome = slowRun.get(60, TimeUnit.SECONDS);

        assertThat(fastOutcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(slowOutcome.state()).as("the id's outcome: " + slowOutcome.reason()).isEqualTo(TransactionState.DONE);
        assertThat(transaction("t-1").get("owner")).as("one document, the run that committed").isEqualTo(fastOwner);
        assertThat(balances(two.collection())).as("moved once, nothing of the other run left").containsExactly(90L, 10L);
    }

    @Test
    void secondRunMeetsTheFirstsPrepares_writesItsDocumentFirst_bothReportItsOutcome() throws Exception {
        TransactionManager second = manager("second", CrashHook.NONE);
        Document first = againWhileTheFirstRunIsPausedBeforeItsCommitInsert(second);
        assertThat(first.getString("owner")).as("the second run fell back to its pending document").isEqualTo(second.settings().owner());
    }

    @Test
    void tutorialRulesRunOfTheSameId_writesItsDocumentFirst_theTwoRoundRunReturnsItsOutcome() throws Exception {
        Document first = againWhileTheFirstRunIsPausedBeforeItsCommitInsert(builder("tutorial", CrashHook.NONE).twoRoundCommit(false).build());
        assertThat(first.get("protocol")).as("the tutorial's document").isNull();
    }

    /**
     * Runs the id on {@code second} while a first two-round run is paused with its prepares landed
     * and its commit insert not sent; once the second run wrote its document, resumes the first.
     * Both report the second's outcome (committed), the money moved once. Returns the first
     * document written under the id.
     */
    private Document againWhileTheFirstRunIsPausedBeforeItsCommitInsert(TransactionManager second) throws Exception {
        TwoAccounts two = accounts();
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        TransactionManager first = manager("first", CommitInserts.pauseAt(CrashPoint.before(CrashPoint.Step.COMMIT, -1), paused, resume));
        CompletableFuture<TransactionOutcome> firstRun = CompletableFuture.supplyAsync(() -> first.run("t-1", transfer(two)));
        assertThat(paused.await(30, TimeUnit.SECONDS)).as("the first run's prepares landed").isTrue();

        CompletableFuture<TransactionOutcome> secondRun = CompletableFuture.supplyAsync(() -> second.run("t-1", transfer(two)));
        Document written = CommitInserts.awaitDocument(mongo.transactions(mongo.database()), "t-1");
        resume.countDown();

        TransactionOutcome firstOutcome = firstRun.get(60, TimeUnit.SECONDS);
        TransactionOutcome secondOutcome = secondRun.get(60, TimeUnit.SECONDS);
        assertThat(secondOutcome.state()).as(String.valueOf(secondOutcome.reason())).isEqualTo(TransactionState.DONE);
        // The second run's outcome as the first read it: committed (applied while its owner finished it, or done).
        assertThat(firstOutcome.isCommitted()).as("the id's outcome: " + firstOutcome).isTrue();
        assertThat(balances(two.collection())).as("moved once").containsExactly(90L, 10L);
        return written;
    }

    @Test
    void queuedTransaction_documentBeforeRoundOne_commitsByCompareAndSet_withoutInsertedAt() {
        TwoAccounts two = accounts();
        TransactionManager client = manager("client", CrashHook.NONE);
        Set<CrashPoint> points = ConcurrentHashMap.newKeySet();
        TransactionManager worker = manager("worker", (p, id) -> points.add(p));
        assertThat(client.submit("q-1", transfer(two), null, true)).isEqualTo("q-1");
        assertThat(transaction("q-1").getString("state")).as("queued: its document first").isEqualTo("initial");

        TransactionOutcome outcome = worker.claimAndRun().orElseThrow();

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(points).contains(CrashPoint.after(CrashPoint.Step.CLAIM, -1), CrashPoint.before(CrashPoint.Step.COMMIT, -1));
        assertThat(transaction("q-1").get("insertedAt")).as("no insert of the two-round rules").isNull();
        assertThat(transaction("q-1").getString("state")).isEqualTo("done");
        assertThat(balances(two.collection())).containsExactly(90L, 10L);
        assertThat(client.submit("q-1", transfer(two), null, true)).as("queued again: nothing more").isEqualTo("q-1");
        assertThat(worker.claimAndRun()).as("nothing left to claim").isEmpty();
        assertThat(balances(two.collection())).containsExactly(90L, 10L);
    }
}
