package io.mongo2pc;

import io.mongo2pc.testing.TestManagers;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mongo2pc.CommitInserts.COMMIT_INSERT;
import static io.mongo2pc.CommitInserts.balances;
import static io.mongo2pc.CommitInserts.transfer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Late copies of the commit insert (docs/COMMIT-INSERT.md), held back by the network: landing after
 * the sweep's tombstone (the owner reports canceled, nothing moved); landing after that tombstone
 * was pruned, with one entry the sweep had not undone yet (the document, inserted after its
 * deadline, counts as canceled for every reader: nothing moves, the entry is undone); landing after
 * the transfer committed, finished and was pruned (no money moves, whatever the copy's document
 * says).
 */
class CommitInsertLateCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration SKEW = Duration.ofMillis(100);

    private static TransactionManager manager(MongoClient client, String app, Duration lease, Duration retry, CrashHook hook) {
        return TransactionManager.builder().target("default", client).database(mongo.database()).application(app)
                .finishInBackground(false).lease(lease).maxClockSkew(SKEW).retryTimeout(retry).crashHook(hook).build();
    }

    private static Document transaction(Object id) {
        return mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
    }

    /** Runs recovery on {@code other} until {@code id}'s tombstone is there (the sweep acts once past the deadline plus the skew). */
    private static void sweepUntilTombstoned(TransactionManager other, Object id) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < giveUp && (transaction(id) == null || !Boolean.TRUE.equals(transaction(id).get("tombstone")))) {
            try {
                other.recover(Duration.ZERO);
            } catch (SimulatedCrash crash) {
                return; // the sweep stopped on purpose after its tombstone
            }
            CommitInserts.sleep(100);
        }
    }

    @Test
    void commitInsertHeldUntilAfterTheSweepsTombstone_ownerReportsCanceledTimedOut_nothingMoves() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TransactionManager other = manager(mongo.newClient(), "other", Duration.ofSeconds(2), Duration.ofSeconds(10), CrashHook.NONE);
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient(300)) {
            CommitInserts.holdEvery(proxy, held, release);
            TransactionManager owner = manager(viaProxy, "owner", Duration.ofSeconds(2), Duration.ofSeconds(60), CrashHook.NONE);
            CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run("t-1", transfer(two)));
            assertThat(held.await(30, TimeUnit.SECONDS)).as("the commit insert was sent").isTrue();
            CommitInserts.awaitPast(CommitInserts.entryUntil(two.collection(), "A"), SKEW.plusMillis(50));
            sweepUntilTombstoned(other, "t-1");
            assertThat(transaction("t-1").getBoolean("tombstone")).as("the sweep's tombstone").isTrue();
            assertThat(balances(two.collection())).as("undone behind the tombstone").containsExactly(100L, 0L);
            proxy.stopEvery();
            release.countDown(); // every copy lands now, on the tombstone

            TransactionOutcome outcome = run.get(60, TimeUnit.SECONDS);
            assertThat(proxy.answered.get()).as("the held copies reached the server").isGreaterThanOrEqualTo(1);
            assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.CANCELED);
            assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        }
        assertThat(balances(two.collection())).containsExactly(100L, 0L);
        assertThat(transaction("t-1").getBoolean("tombstone")).as("the copies changed nothing").isTrue();
        assertThat(transaction("t-1").getString("state")).isEqualTo("canceled");
    }

    /**
     * Depends on every reader applying the lateness rule: without it, the reader rolls the late
     * document forward and releases the entry the sweep left (B credited, A's debit given back).
     */
    @Test
    void commitInsertLandingAfterItsTombstoneWasPruned_countsCanceledForEveryReader_nothingMoves() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        MongoCollection<Document> accounts = two.collection();
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger resolves = new AtomicInteger();
        // The sweep tombstones the transfer and undoes one of its two entries, then stops.
        CrashHook stopAtTheSecondEntry = (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.RESOLVE, -1)) && resolves.incrementAndGet() == 2) {
                throw new SimulatedCrash(point, id);
            }
        };
        TransactionManager sweeper = manager(mongo.newClient(), "sweeper", Duration.ofSeconds(2), Duration.ofSeconds(10), stopAtTheSecondEntry);
        TransactionManager reader = manager(mongo.newClient(), "reader", Duration.ofSeconds(2), Duration.ofSeconds(10), CrashHook.NONE);
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient(300)) {
            CommitInserts.holdEvery(proxy, held, release);
            // The owner gives up on its commit insert (its process may as well have ended): every copy is held.
            TransactionManager owner = manager(viaProxy, "owner", Duration.ofSeconds(2), Duration.ofSeconds(1), CrashHook.NONE);
            assertThat(catchThrowable(() -> owner.run("t-1", transfer(two)))).as("the owner gave up").isNotNull();
            assertThat(held.getCount()).isZero();
            CommitInserts.awaitPast(CommitInserts.entryUntil(accounts, "B"), SKEW.plusMillis(50));
            sweepUntilTombstoned(sweeper, "t-1");
            assertThat(resolves).as("the sweep undid one entry and stopped at the second").hasValue(2);
            long marked = accounts.countDocuments(new Document("pendingTransactions", "t-1"));
            assertThat(marked).as("one entry undone, one left").isEqualTo(1L);
            assertThat(reader.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("the tombstone pruned").isEqualTo(1L);
            proxy.stopEvery();
            release.countDown();
            Document late = CommitInserts.awaitDocument(mongo.transactions(mongo.database()), "t-1");
            assertThat(late).as("a held copy inserted the document again").isNotNull();
            assertThat(late.getString("state")).isEqualTo("applied");
            assertThat(late.getDate("insertedAt")).as("after its deadline").isAfterOrEqualTo(late.getDate("until"));
        }

        assertThat(reader.readCommitted(two.b()).orElseThrow().getLong("balance")).as("B's credit never committed").isZero();
        assertThat(reader.readCommitted(two.a()).orElseThrow().getLong("balance")).as("A's debit never committed").isEqualTo(100L);
        Optional<TransactionOutcome> outcome = reader.awaitOutcome("t-1", Duration.ofSeconds(10));
        assertThat(outcome).isPresent();
        assertThat(outcome.get().state()).as("the id's outcome").isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.get().reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        mongo.expireLeases(mongo.database());
        reader.recover(Duration.ZERO);
        assertThat(balances(accounts)).as("nothing moved, the left entry undone").containsExactly(100L, 0L);
        assertThat(reader.inspect("t-1").orElseThrow().state()).isEqualTo(TransactionState.CANCELED);
    }

    @Test
    void copyHeldUntilTheTransferFinishedAndWasPruned_landingBeforeItsDeadline_movesNoMoney() throws Exception {
        copyAfterPrune(Duration.ofSeconds(20), false);
    }

    @Test
    void copyHeldUntilTheTransferFinishedAndWasPruned_landingAfterItsDeadline_movesNoMoney() throws Exception {
        copyAfterPrune(Duration.ofSeconds(3), true);
    }

    /** The first copy of the commit insert held; the owner's second copy commits; the first lands after the prune. */
    private void copyAfterPrune(Duration lease, boolean pastDeadline) throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger held = new AtomicInteger();
        TransactionManager other = manager(mongo.newClient(), "other", lease, Duration.ofSeconds(10), CrashHook.NONE);
        Instant until;
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient(300)) {
            proxy.runBefore(COMMIT_INSERT, () -> {
                held.incrementAndGet();
                CommitInserts.await(release);
            });
            TransactionManager owner = manager(viaProxy, "owner", lease, Duration.ofSeconds(10), CrashHook.NONE);
            TransactionOutcome outcome = owner.run("t-1", transfer(two));
            assertThat(held).as("the first copy was held").hasValue(1);
            assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
            until = transaction("t-1").getDate("until").toInstant();
            assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("pruned right after the transfer").isEqualTo(1L);
            if (pastDeadline) {
                CommitInserts.awaitPast(until, SKEW.plusMillis(50));
            }
            release.countDown();
            assertThat(CommitInserts.awaitDocument(mongo.transactions(mongo.database()), "t-1")).as("the copy inserted the document again").isNotNull();
        }
        if (pastDeadline) {
            assertThat(transaction("t-1").getDate("insertedAt")).as("inserted late").isAfterOrEqualTo(transaction("t-1").getDate("until"));
        }
        assertThat(balances(two.collection())).as("the copy moved nothing").containsExactly(90L, 10L);
        assertThat(other.readCommitted(two.a()).orElseThrow().getLong("balance")).isEqualTo(90L);
        assertThat(other.readCommitted(two.b()).orElseThrow().getLong("balance")).isEqualTo(10L);
        mongo.expireLeases(mongo.database());
        other.recover(Duration.ZERO);
        assertThat(balances(two.collection())).as("recovery of the copy's document moved nothing").containsExactly(90L, 10L);
        assertThat(TransactionState.parse(transaction("t-1").getString("state")).orElseThrow().isTerminal())
                .as("recovery ended it: " + transaction("t-1").toJson()).isTrue();
    }
}
