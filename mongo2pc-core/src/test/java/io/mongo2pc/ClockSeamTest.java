package io.mongo2pc;

import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testing.FakeClock;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Unreachable;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The manager's waits follow the {@code clock} it is built with: with a clock the test moves, a
 * retry timeout, a conflict timeout or an awaited outcome's timeout of minutes is reached at
 * once, against a real server. Each test would take those minutes on the system's clock: its
 * preemptive timeout (a failure's deadline, well under the wait) catches a wait that bypasses
 * the clock, and so does the check that the clock was moved by the whole wait.
 */
class ClockSeamTest {
    /** Far more than any of these tests needs on a moved clock, far less than the waits they cover. */
    private static final Duration FAILURE_DEADLINE = Duration.ofSeconds(90);

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void retrier_givesUpAtRetryTimeout_onTheManagersClock_whenTheServerIsUnreachable() throws Exception {
        Duration retryTimeout = Duration.ofMinutes(10);
        FakeClock clock = new FakeClock();
        try (MongoClient unreachable = Unreachable.client()) {
            TransactionManager manager = TestManagers.builder(unreachable, mongo.database(), "app").twoRoundCommit(false).finishInBackground(false)
                    .retryTimeout(retryTimeout).clock(clock).build();
            DocumentRef a = DocumentRef.of(mongo.database(), "accounts", "A");

            assertTimeoutPreemptively(FAILURE_DEADLINE, () ->
                    assertThatThrownBy(() -> manager.run(List.of(Operation.increment(a, "balance", 1L, null))))
                            .isInstanceOf(OutcomeUnknownException.class)
                            .hasMessageContaining("after " + retryTimeout.toMillis() + "ms of database errors"));
            // It gives up when the next backoff (at most a second, with half of it as jitter) would pass the timeout.
            assertThat(clock.elapsed()).as("time waited on the manager's clock")
                    .isBetween(retryTimeout.minusSeconds(1), retryTimeout.plusMillis(500));
            assertThat(clock.sleeps()).as("backoffs slept on the manager's clock").isGreaterThan(1);
        }
    }

    @Test
    void busyDocument_isWaitedForUntilConflictTimeout_onTheManagersClock() throws Exception {
        Duration conflictTimeout = Duration.ofMinutes(5);
        DocumentRef order = ordered();
        try (Blocked blocked = blockedUpdate(order)) {
            FakeClock clock = new FakeClock();
            TransactionManager waiting = TestManagers.builder(mongo.client(), mongo.database(), "waiting").twoRoundCommit(false).finishInBackground(false)
                    .conflictTimeout(conflictTimeout).clock(clock).build();

            TransactionOutcome outcome = assertTimeoutPreemptively(FAILURE_DEADLINE, () -> waiting.run(List.of(
                    Operation.update(order, new Document("$set", new Document("state", "Shipped")), null))));

            assertThat(outcome.state()).as(outcome.reason()).isEqualTo(TransactionState.CANCELED);
            assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.CONFLICT);
            assertThat(clock.elapsed()).as("time waited on the manager's clock").isGreaterThan(conflictTimeout);
        }
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("orders").find().first().getString("state"))
                .as("the first transaction's update, finished once let go").isEqualTo("Paid");
    }

    @Test
    void awaitOutcome_givesUpAfterItsTimeout_onTheManagersClock_whileTheOwnerIsAlive() throws Exception {
        Duration timeout = Duration.ofMinutes(2);
        DocumentRef order = ordered();
        try (Blocked blocked = blockedUpdate(order)) {
            FakeClock clock = new FakeClock();
            TransactionManager other = TestManagers.builder(mongo.client(), mongo.database(), "other").twoRoundCommit(false).finishInBackground(false).clock(clock).build();

            assertTimeoutPreemptively(FAILURE_DEADLINE, () ->
                    assertThatThrownBy(() -> other.awaitOutcome(blocked.id, timeout))
                            .isInstanceOf(OutcomeUnknownException.class)
                            .hasMessageContaining("is still pending after " + timeout.toMillis() + "ms"));
            assertThat(clock.elapsed()).as("time waited on the manager's clock").isGreaterThanOrEqualTo(timeout);
        }
    }

    private static DocumentRef ordered() {
        mongo.client().getDatabase(mongo.database()).getCollection("orders")
                .insertOne(new Document("_id", "o1").append("state", "UnPaid"));
        return DocumentRef.of(mongo.database(), "orders", "o1");
    }

    /** A transaction whose owner stops, alive, right after taking {@code order}, until closed. */
    private static Blocked blockedUpdate(DocumentRef order) throws InterruptedException {
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        TransactionManager owner = TestManagers.builder(mongo.client(), mongo.database(), "owner").twoRoundCommit(false).finishInBackground(false)
                .lease(Duration.ofHours(1))
                .crashHook((point, id) -> {
                    if (point.equals(CrashPoint.after(Step.APPLY, 0))) {
                        taken.countDown();
                        try {
                            letGo.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }).build();
        Object id = "blocking";
        CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run(id, List.of(
                Operation.update(order, new Document("$set", new Document("state", "Paid")), null))));
        assertThat(taken.await(60, TimeUnit.SECONDS)).as("the owner took the order").isTrue();
        return new Blocked(id, letGo, run);
    }

    private record Blocked(Object id, CountDownLatch letGo, CompletableFuture<TransactionOutcome> run) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            letGo.countDown();
            assertThat(run.get(60, TimeUnit.SECONDS).state()).isEqualTo(TransactionState.DONE);
        }
    }
}
