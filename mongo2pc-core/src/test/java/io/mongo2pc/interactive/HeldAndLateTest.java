package io.mongo2pc.interactive;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.TransactionConflictException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.sweeps.Orphans;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Interactive transactions meeting another that stopped, one paused past its deadline, and a late
 * copy of a write: a document held by an owner that crashed makes another transaction time out with
 * the conflict (which document, held by which transaction), and go through once the holder can be
 * resolved; a paused owner's attempt never commits after its deadline (its body runs again); a take
 * held in the network lands after its attempt ended and changes nothing.
 */
class HeldAndLateTest {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SKEW = Duration.ofMillis(100);

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> counters;
    private DocumentRef counter;

    @BeforeEach
    void counter() {
        counters = mongo.client().getDatabase(mongo.database()).getCollection("counters");
        counters.insertOne(new Document("_id", "c").append("n", 0L));
        counter = DocumentRef.of(mongo.database(), "counters", "c");
    }

    private static TransactionManager manager(MongoClient client, String application, CrashHook hook) {
        return TestManagers.crashing(client, mongo.database(), application, hook).lease(LEASE).maxClockSkew(SKEW)
                .finishInBackground(false).build();
    }

    private TransactionResult<Long> increment(TransactionManager tm, TransactionOptions options) {
        return tm.transact(options, ctx -> {
            long n = ctx.get(counter).orElseThrow().getLong("n");
            ctx.update(counter, new Document("$set", new Document("n", n + 1)));
            return n + 1;
        });
    }

    private long n() {
        return counters.find().first().getLong("n");
    }

    @Test
    void documentHeldByAnOwnerThatCrashed_anotherTimesOutWithTheConflict_thenGoesThroughOnceItIsResolvable() {
        Object[] holder = new Object[1];
        TransactionManager crashing = manager(mongo.client(), "crashes", (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                holder[0] = id;
                throw new SimulatedCrash(point, id);
            }
        });
        assertThatThrownBy(() -> increment(crashing, TransactionOptions.defaults())).isInstanceOf(SimulatedCrash.class);
        TransactionManager other = manager(mongo.newClient(), "other", CrashHook.NONE);

        TransactionOptions briefly = TransactionOptions.builder().id("impatient").timeout(Duration.ofMillis(300)).build();
        assertThatThrownBy(() -> increment(other, briefly)).isInstanceOfSatisfying(TransactionConflictException.class, e -> {
            assertThat(e.transactionId()).isEqualTo("impatient");
            assertThat(e.attempts()).isPositive();
            assertThat(e.conflictKind()).isEqualTo(ConflictKind.HELD);
            assertThat(e.conflictDocument()).isEqualTo(counter);
            assertThat(e.conflictingTransaction()).isEqualTo(holder[0]);
            assertThat(e.getMessage()).contains("impatient", "taken by transaction " + holder[0]);
        });
        assertThat(mongo.transactions(mongo.database()).countDocuments()).as("nothing written for the one that timed out").isZero();

        Orphans.awaitResolvable(mongo.client().getDatabase(mongo.database()), SKEW);
        TransactionResult<Long> result = increment(other, TransactionOptions.builder().id("impatient").build());

        assertThat(result.value()).as("the crashed owner's write undone, this one applied once").isEqualTo(1L);
        assertThat(n()).isEqualTo(1L);
    }

    @Test
    void ownerPausedPastItsDeadline_itsAttemptNeverCommits_andItsBodyRunsAgainOnWhatCommittedMeanwhile() throws Exception {
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicBoolean once = new AtomicBoolean();
        TransactionManager pausing = manager(mongo.client(), "pauses", (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1)) && once.compareAndSet(false, true)) {
                paused.countDown();
                try {
                    resume.await(); // a GC pause, a SIGSTOP: its round 1 is in effect, its commit not sent
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        CompletableFuture<TransactionResult<Long>> first = CompletableFuture.supplyAsync(() -> increment(pausing, TransactionOptions.defaults()));
        assertThat(paused.await(10, TimeUnit.SECONDS)).isTrue();
        Orphans.awaitResolvable(mongo.client().getDatabase(mongo.database()), SKEW);

        TransactionResult<Long> other = increment(manager(mongo.newClient(), "other", CrashHook.NONE), TransactionOptions.defaults());
        resume.countDown();
        TransactionResult<Long> resumed = first.get(30, TimeUnit.SECONDS);

        assertThat(other.value()).as("the paused owner's take was undone past its deadline").isEqualTo(1L);
        assertThat(resumed.attempts()).as("the paused attempt did not commit; the body ran again").isGreaterThan(1);
        assertThat(resumed.value()).isEqualTo(2L);
        assertThat(n()).isEqualTo(2L);
    }

    @Test
    void lateCopyOfATake_landsAfterItsAttemptWasUndone_andChangesNothing() throws Exception {
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS))
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            // The optimistic take: the counter as read (its version, free of markers), its lock and before-image
            // set whole (a pessimistic attempt's change sets _m2pc.undo into the lock it took before).
            java.util.function.Predicate<String> take = text -> text.contains("\u0000c\u0000") && text.contains("pendingTransactions.0")
                    && text.contains("_m2pc_v") && !text.contains("_m2pc.undo");
            proxy.countAnswers(take);
            proxy.runBefore(take, () -> sleep(5 * LEASE.toMillis()));

            TransactionResult<Long> result = increment(manager(viaProxy, "late", CrashHook.NONE), TransactionOptions.defaults());

            assertThat(result.attempts()).as("the take in doubt was waited out and undone; the body ran again").isGreaterThan(1);
            assertThat(proxy.answered.get()).as("the held copy was still on its way").isZero();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (proxy.answered.get() < 1 && System.nanoTime() < deadline) {
                sleep(20);
            }
            assertThat(proxy.answered.get()).as("the late copy reached the server").isEqualTo(1);
        }
        assertThat(n()).as("incremented once").isEqualTo(1L);
        assertThat(counters.find().first()).doesNotContainKey("_m2pc");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
