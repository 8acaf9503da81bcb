package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The owner's answers after its commit insert (the document's first write, {@code applied}) when
 * it is not the plain in-time insert: inserted after the deadline with no resolver around, met by
 * others before its owner repaired it, rolled forward by a reader or taken over by recovery while
 * the owner was paused, the id run again; and round 1 slower than the deadline. Each time the
 * caller is told what the stored document counts as, and the money moved once or not at all.
 * (Tombstones, pruned tombstones and lost answers: CommitInsertLateCopyTest, CommitInsertLostAnswerTest,
 * CommitInsertPausedOwnerTest.)
 */
class CommitInsertOwnerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    private TwoAccounts two;
    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    private void accounts(long balanceA, long balanceB) {
        two = TwoAccounts.create(mongo, balanceA, balanceB);
        accounts = two.collection();
        a = two.a();
        b = two.b();
        mongo.invariants().expectTotal(mongo.database(), balanceA + balanceB);
    }

    private static TransactionManager manager(MongoClient client, CrashHook hook) {
        return TransactionManager.builder().finishInBackground(false).target("default", client).database(mongo.database())
                .application("commit-insert").twoRoundCommit(true).commitInsert(true).lease(LEASE).maxClockSkew(SKEW)
                .retryTimeout(Duration.ofSeconds(10)).crashHook(hook).build();
    }

    private List<Operation> transfer(long value) {
        return two.transfer(value);
    }

    private List<Long> balances() {
        return two.settledBalances();
    }

    private static Document transaction(Object id) {
        return mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
    }

    /** An owner that stops at {@code point} until {@link #resume} (once). */
    private static final class Pause implements CrashHook {
        final CountDownLatch paused = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        final AtomicReference<Object> id = new AtomicReference<>();
        private final CrashPoint point;
        private final AtomicBoolean once = new AtomicBoolean();

        Pause(CrashPoint point) {
            this.point = point;
        }

        @Override
        public void reached(CrashPoint reached, Object transactionId) {
            id.set(transactionId);
            if (reached.equals(point) && once.compareAndSet(false, true)) {
                paused.countDown();
                try {
                    resume.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The deadline of the transaction's hold on A (the deadline its commit insert must beat). */
    private Instant holdUntil() {
        Document held = accounts.find(new Document("_id", "A")).first();
        return held.keySet().stream().filter(k -> LibraryFields.entry(k)).findFirst()
                .map(k -> held.get(k, Document.class).getDate("until").toInstant()).orElseThrow();
    }

    /** Waits until the server's clock (this host's, for the embedded server) is past {@code t}. */
    private static void waitPast(Instant t) {
        while (!Instant.now().isAfter(t.plusMillis(20))) {
            sleep(10);
        }
    }

    private CompletableFuture<TransactionOutcome> runPaused(TransactionManager owner, Pause pause) throws InterruptedException {
        CompletableFuture<TransactionOutcome> running = CompletableFuture.supplyAsync(() -> owner.run(transfer(30)));
        assertThat(pause.paused.await(20, TimeUnit.SECONDS)).as("the owner reached its pause").isTrue();
        return running;
    }

    @Test
    void commitInsertLandsAfterTheDeadline_ownerReportsCanceled_andNothingMoves() throws Exception {
        accounts(100, 0);
        Pause pause = new Pause(CrashPoint.before(CrashPoint.Step.COMMIT, -1));
        CompletableFuture<TransactionOutcome> running = runPaused(manager(mongo.client(), pause), pause);
        assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).as("the hold landed").isEqualTo(70L);
        waitPast(holdUntil()); // no resolver runs: nothing undoes the prepares meanwhile

        pause.resume.countDown();
        TransactionOutcome outcome = running.get(30, TimeUnit.SECONDS);

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        Document stored = transaction(outcome.id());
        assertThat(stored.getDate("insertedAt")).as("inserted late").isAfterOrEqualTo(stored.getDate("until"));
        assertThat(stored.getString("state")).as("repaired").isEqualTo(TransactionState.CANCELED.stored());
        assertThat(balances()).containsExactly(100L, 0L);
    }

    @Test
    void ownerPausedAfterItsCommitInsert_recoveryFinishesIt_ownerSaysLeaseLost_andTheTransferRunsOnce() throws Exception {
        accounts(100, 0);
        Pause pause = new Pause(CrashPoint.after(CrashPoint.Step.COMMIT, -1));
        CompletableFuture<TransactionOutcome> running = runPaused(manager(mongo.client(), pause), pause);
        mongo.expireLeases(mongo.database());
        TransactionManager other = manager(mongo.newClient(), CrashHook.NONE);
        other.recover(Duration.ZERO);
        assertThat(transaction(pause.id.get()).getString("state")).isEqualTo(TransactionState.DONE.stored());

        pause.resume.countDown();
        Throwable thrown = null;
        TransactionOutcome outcome = null;
        try {
            outcome = running.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            thrown = e.getCause();
        }
        // Told committed, or told that another process finished it; never canceled.
        if (outcome != null) {
            assertThat(outcome.state()).isIn(TransactionState.APPLIED, TransactionState.DONE);
        } else {
            assertThat(thrown).isInstanceOf(LeaseLostException.class);
        }
        assertThat(other.awaitOutcome(pause.id.get(), Duration.ofSeconds(5)).orElseThrow().state()).isEqualTo(TransactionState.DONE);
        assertThat(balances()).containsExactly(70L, 30L);
    }

    @Test
    void commitInsertInTime_readerRollsItForwardWhileTheOwnerIsPaused_ownerReportsCommittedNotLeaseLost() throws Exception {
        accounts(100, 0);
        Pause pause = new Pause(CrashPoint.after(CrashPoint.Step.COMMIT, -1));
        CompletableFuture<TransactionOutcome> running = runPaused(manager(mongo.client(), pause), pause);
        Object id = pause.id.get();
        assertThat(transaction(id).getString("state")).isEqualTo(TransactionState.APPLIED.stored());
        // Past its deadline, the owner's clock can no longer tell the insert was in time: it reads the document back.
        waitPast(holdUntil());
        TransactionManager reader = manager(mongo.newClient(), CrashHook.NONE);
        assertThat(reader.readCommitted(b).orElseThrow().getLong("balance")).as("committed in time").isEqualTo(30L);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!TransactionState.DONE.stored().equals(transaction(id).getString("state")) && System.nanoTime() < deadline) {
            sleep(20);
        }
        assertThat(transaction(id).getString("state")).as("rolled forward by the reader").isEqualTo(TransactionState.DONE.stored());

        pause.resume.countDown();
        TransactionOutcome outcome;
        try {
            outcome = running.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("a committed transaction nobody took over was reported as " + e.getCause(), e.getCause());
        }

        assertThat(outcome.state()).isIn(TransactionState.APPLIED, TransactionState.DONE);
        assertThat(balances()).containsExactly(70L, 30L);
    }

    @Test
    void lateCommitInsert_metByAReaderAndATransferBeforeItsOwnerRepairsIt_isNeverRolledForward() throws Exception {
        accounts(100, 0);
        Pause beforeInsert = new Pause(CrashPoint.before(CrashPoint.Step.COMMIT, -1));
        Pause afterInsert = new Pause(CrashPoint.after(CrashPoint.Step.COMMIT, -1));
        CrashHook both = (point, id) -> {
            beforeInsert.reached(point, id);
            afterInsert.reached(point, id);
        };
        CompletableFuture<TransactionOutcome> running = runPaused(manager(mongo.client(), both), beforeInsert);
        waitPast(holdUntil());
        beforeInsert.resume.countDown();
        assertThat(afterInsert.paused.await(20, TimeUnit.SECONDS)).as("the late insert landed").isTrue();
        Object id = beforeInsert.id.get();
        assertThat(transaction(id).getDate("insertedAt")).isAfterOrEqualTo(transaction(id).getDate("until"));

        // Other processes meet the late document's entries before its owner goes on: a reader, and a
        // transfer out of B (whose prepare resolves the entry it finds there).
        TransactionManager other = manager(mongo.newClient(), CrashHook.NONE);
        long readB = other.readCommitted(b).orElseThrow().getLong("balance");
        TransactionOutcome outOfB = other.run(List.of(
                Operation.increment(b, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(a, "balance", 10L, null)));
        afterInsert.resume.countDown();
        TransactionOutcome outcome = running.get(30, TimeUnit.SECONDS);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outOfB.state()).as("B never had the late transfer's 30").isEqualTo(TransactionState.CANCELED);
        assertThat(balances()).containsExactly(100L, 0L);
        assertThat(readB).as("a late commit insert counts as canceled for readers").isZero();
    }

    @Test
    void roundOneSlowerThanTheDeadline_preparesExpired_ownerEndsTheTransactionInsteadOfLeaseLost() throws Exception {
        accounts(100, 0);
        TransactionOutcome outcome;
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            // The network holds round 1's prepares past their deadline: the server refuses them (expired).
            proxy.runBefore(request -> request.contains("accounts") && request.contains("$$NOW"), () -> sleep(LEASE.toMillis() + 200));
            try {
                outcome = manager(viaProxy, CrashHook.NONE).run(transfer(30));
            } catch (LeaseLostException e) {
                throw new AssertionError("no other process ran, yet the owner reported " + e, e);
            }
        }
        Document stored = transaction(outcome.id());
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isIn(TransactionState.DONE, TransactionState.CANCELED);
        assertThat(stored.getString("state")).isEqualTo(outcome.state().stored());
        assertThat(balances()).containsExactly(outcome.state() == TransactionState.DONE ? 70L : 100L,
                outcome.state() == TransactionState.DONE ? 30L : 0L);
    }

    @Test
    void idRunAgainAfterItFinished_theCommitInsertMeetsIt_returnsTheFirstOutcome_andTheTransferRunsOnce() {
        accounts(100, 0);
        TransactionManager owner = manager(mongo.client(), CrashHook.NONE);
        assertThat(owner.run("pay-1", transfer(30)).state()).isEqualTo(TransactionState.DONE);

        TransactionOutcome again = owner.run("pay-1", transfer(30));

        assertThat(again.state()).isEqualTo(TransactionState.DONE);
        assertThat(balances()).containsExactly(70L, 30L);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
