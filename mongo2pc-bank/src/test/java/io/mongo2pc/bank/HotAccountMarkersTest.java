package io.mongo2pc.bank;

import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Bounded markers: a hot account under many concurrent transfers never carries more than maxMarkers. */
class HotAccountMarkersTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @ParameterizedTest(name = "two-round commit: {0}")
    @ValueSource(booleans = {false, true})
    void hotAccount_underConcurrentTransfers_keepsAtMostMaxMarkers_andNoneAfterwards(boolean twoRound) throws Exception {
        String db = mongo.database();
        int maxMarkers = 4;
        TransactionManager manager = Bank.configure(TransactionManager.builder().finishInBackground(false).target("default", mongo.client())
                .database(db).maxMarkers(maxMarkers).conflictTimeout(Duration.ofSeconds(10)).twoRoundCommit(twoRound)).build();
        Bank bank = new Bank(manager);
        bank.createAccount("HOT", 0L);
        for (int i = 0; i < 16; i++) {
            bank.createAccount("S" + i, 1_000L);
        }
        mongo.invariants().expectTotal(db, 16_000L);

        // Sample the hot account's marker list while 16 threads pay into it.
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger mostSeen = new AtomicInteger();
        Thread sampler = new Thread(() -> {
            while (running.get()) {
                Document hot = bank.accounts().find(new Document("_id", "HOT")).first();
                mostSeen.accumulateAndGet(hot.getList("pendingTransactions", Object.class).size(), Math::max);
            }
        });
        sampler.start();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        ConcurrentLinkedQueue<TransactionOutcome> outcomes = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(16);
        for (int t = 0; t < 16; t++) {
            String source = "S" + t;
            pool.submit(() -> {
                try {
                    for (int k = 0; k < 40; k++) {
                        outcomes.add(bank.transfer(source, "HOT", 1L));
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        assertThat(done.await(120, TimeUnit.SECONDS)).isTrue();
        running.set(false);
        sampler.join();
        pool.shutdown();

        long committed = outcomes.stream().filter(TransactionOutcome::isDone).count();
        assertThat(outcomes).hasSize(640);
        assertThat(mostSeen.get()).as("markers seen on the hot account").isLessThanOrEqualTo(maxMarkers).isGreaterThan(1);
        assertThat(bank.accounts().find(new Document("_id", "HOT")).first())
                .containsEntry("balance", committed).containsEntry("pendingTransactions", List.of());
        assertThat(bank.accounts().find(new Document("_id", "HOT")).first().keySet()).noneMatch(k -> LibraryFields.leftover(k));
    }
}
