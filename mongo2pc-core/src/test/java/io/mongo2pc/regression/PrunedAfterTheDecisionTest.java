package io.mongo2pc.regression;

import com.mongodb.client.MongoClient;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A transaction decided (committed, or canceled) whose document others finished and prune removed
 * before its owner's last state change: the owner, its background finisher and a caller awaiting
 * the outcome report how it ended, never a lost lease, never "no such transaction".
 */
class PrunedAfterTheDecisionTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private DocumentRef a;
    private DocumentRef b;

    private String accounts(long balanceOfA) {
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", balanceOfA).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        a = DocumentRef.of(db, "accounts", "A");
        b = DocumentRef.of(db, "accounts", "B");
        return db;
    }

    private List<Operation> transfer(long amount, long floor) {
        return List.of(Operation.increment(a, "balance", -amount, new Document("balance", new Document("$gte", floor))),
                Operation.increment(b, "balance", amount, null));
    }

    /** Runs {@code action} once, in the owner's thread, the first time it reaches {@code point}. */
    private static CrashHook once(CrashPoint point, Runnable action) {
        AtomicInteger reached = new AtomicInteger();
        return (p, id) -> {
            if (p.equals(point) && reached.getAndIncrement() == 0) {
                action.run();
            }
        };
    }

    /** A reader meets the transaction's marker, its roll forward moves it to done, and prune removes it. */
    private static void rolledForwardAndPruned(TransactionManager other, DocumentRef credited, String db) {
        other.readCommitted(credited);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (mongo.transactions(db).countDocuments(new Document("state", "done")) == 0) {
            assertThat(System.nanoTime()).as("the reader's roll forward moved it to done").isLessThan(deadline);
            Thread.onSpinWait();
        }
        assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("pruned").isEqualTo(1L);
    }

    @Test
    void inlineOwner_documentRolledForwardAndPrunedBeforeItsOwnMoveToDone_reportsCommitted() {
        // given: a transfer committed by its owner, which finishes inline; just before its releases, a
        // reader meets its marker, its roll forward moves it to done, and prune removes it
        String db = accounts(100L);
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").build();
        TransactionManager owner = TestManagers.builder(mongo.client(), db, "owner").finishInBackground(false)
                .crashHook(once(CrashPoint.before(Step.RELEASE, 0), () -> rolledForwardAndPruned(other, b, db))).build();

        // when
        TransactionOutcome outcome = owner.run(transfer(30L, 30L));

        // then: committed, as it is
        assertThat(outcome.isCommitted()).as("outcome " + outcome).isTrue();
        assertThat(other.readCommitted(a).orElseThrow().get("balance")).isEqualTo(70L);
        assertThat(other.readCommitted(b).orElseThrow().get("balance")).isEqualTo(30L);
    }

    @Test
    void backgroundFinisher_documentRolledForwardAndPrunedBeforeItsMoveToDone_countsItCommitted() {
        // given: a committed transfer handed to the finisher thread; just before its releases, a reader
        // meets its marker, its roll forward moves it to done, and prune removes it
        String db = accounts(100L);
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger leaseLost = new AtomicInteger();
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").build();
        try (TransactionManager owner = TestManagers.builder(mongo.client(), db, "owner")
                .metrics(new TransactionMetrics() {
                    @Override
                    public void committed(Duration latency) {
                        committed.incrementAndGet();
                    }

                    @Override
                    public void leaseLost() {
                        leaseLost.incrementAndGet();
                    }
                })
                .crashHook(once(CrashPoint.before(Step.RELEASE, 0), () -> rolledForwardAndPruned(other, b, db))).build()) {

            // when
            TransactionOutcome outcome = owner.run(transfer(30L, 30L));
            assertThat(owner.awaitFinished(Duration.ofSeconds(30))).isTrue();

            // then: the caller was told committed at the commit point, and the finisher counts it done
            assertThat(outcome.isCommitted()).as("outcome " + outcome).isTrue();
            assertThat(committed).as("counted committed").hasValue(1);
            assertThat(leaseLost).as("counted as a lost lease").hasValue(0);
        }
    }

    @Test
    void owner_canceledByRecoveryAndPrunedBeforeItsOwnMoveToCanceled_reportsCanceled() {
        // given: a transfer refused by its guard; just before its owner's canceling -> canceled, its lease
        // runs out and recovery takes it over, finishes the cancel, and prune removes it
        String db = accounts(100L);
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").build();
        TransactionManager owner = TestManagers.builder(mongo.client(), db, "owner").finishInBackground(false)
                .crashHook(once(CrashPoint.before(Step.FINISH_CANCEL, -1), () -> {
                    mongo.expireLeases(db);
                    other.recover(Duration.ZERO);
                    assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("pruned").isEqualTo(1L);
                })).build();

        // when
        TransactionOutcome outcome = owner.run(transfer(30L, 1_000L));

        // then
        assertThat(outcome.state()).as("outcome " + outcome).isEqualTo(TransactionState.CANCELED);
        assertThat(other.readCommitted(a).orElseThrow().get("balance")).isEqualTo(100L);
    }

    @Test
    void awaitOutcome_transactionSeenCommittedThenFinishedAndPrunedByAnother_reportsDone() throws Exception {
        // given: a committed transfer whose owner died at its commit point, its lease run out
        String db = accounts(100L);
        TransactionManager owner = TestManagers.builder(mongo.client(), db, "owner").finishInBackground(false)
                .crashHook(once(CrashPoint.after(Step.COMMIT, -1), () -> {
                    throw new IllegalStateException("the owner dies at its commit point");
                })).build();
        assertThatThrownBy(() -> owner.run(transfer(30L, 30L))).hasMessageContaining("dies");
        Object id = mongo.transactions(db).find().first().get("_id");
        mongo.expireLeases(db);
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").build();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            TransactionManager caller = TestManagers.builder(viaProxy, db, "caller").build();
            // just before the caller takes it over: another process does, finishes it, and prune removes it
            proxy.runBefore(request -> request.contains("findAndModify") && request.contains("transactions")
                    && !request.contains("transactions_clock"), () -> {
                other.recover(Duration.ZERO);
                assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("pruned").isEqualTo(1L);
            });

            // when
            Optional<TransactionOutcome> outcome = caller.awaitOutcome(id, Duration.ofSeconds(30));

            // then: the caller learns it is done, not that it never existed
            assertThat(outcome).as("the outcome awaited").hasValueSatisfying(o -> assertThat(o.state()).isEqualTo(TransactionState.DONE));
        }
    }
}
