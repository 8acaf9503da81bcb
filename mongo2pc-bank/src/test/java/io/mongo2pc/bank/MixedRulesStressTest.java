package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions of both rules on the same accounts at once, with crashes: transfers by the
 * tutorial's rules ({@code twoRoundCommit(false)}), transfers by the default rules (the two-round
 * commit, finished in the background), and transfers that also update a third account (the
 * default rules fall back to the tutorial's for them), each owner stopped at a random protocol
 * write now and then, while a recoverer runs passes and a reader reads committed (rolling forward
 * what it meets). No stored balance is ever negative; once everything is recovered, every
 * transaction has ended, no marker is left, and the money is all there.
 */
class MixedRulesStressTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ACCOUNTS = 6;
    private static final long OPENING = 100;
    private static final int THREADS = 4;
    private static final int PER_THREAD = 40;
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(100);

    private TransactionManagerBuilder builder(String application, CrashHook hook) {
        return Bank.configure(TestManagers.builder(mongo.newClient(), mongo.database(), application).crashHook(hook)
                .lease(LEASE).maxClockSkew(SKEW).conflictTimeout(Duration.ofSeconds(2)).retryTimeout(TestManagers.RETRY_TIMEOUT));
    }

    private DocumentRef account(int i) {
        return DocumentRef.of(mongo.database(), Bank.ACCOUNTS, "A" + i);
    }

    /** A crash hook that stops the protocol at about one write in fifty (seeded per thread). */
    private static CrashHook sometimes(long seed, AtomicInteger crashes) {
        SplittableRandom random = new SplittableRandom(seed);
        return (point, id) -> {
            boolean crash;
            synchronized (random) {
                crash = random.nextInt(50) == 0;
            }
            if (crash) {
                crashes.incrementAndGet();
                throw new SimulatedCrash(point, id);
            }
        };
    }

    @Test
    void bothRulesOnTheSameAccounts_withCrashesAndRecovery_keepEveryInvariant() throws Exception {
        Bank setup = new Bank(builder("setup", CrashHook.NONE).build());
        for (int i = 0; i < ACCOUNTS; i++) {
            setup.createAccount("A" + i, OPENING);
        }
        mongo.invariants().expectTotal(mongo.database(), ACCOUNTS * OPENING);
        AtomicInteger crashes = new AtomicInteger();
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger rules1 = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> negative = new ConcurrentLinkedQueue<>();
        List<TransactionManager> managers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 2);
        TransactionManager recoverer = builder("recoverer", CrashHook.NONE).sweepPeriod(Duration.ZERO).build();
        TransactionManager reader = builder("reader", CrashHook.NONE).build();
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                TransactionManager tutorial = builder("tutorial-" + t, sometimes(100 + t, crashes))
                        .twoRoundCommit(false).finishInBackground(t % 2 == 0).build();
                TransactionManager byDefault = builder("default-" + t, sometimes(200 + t, crashes)).build();
                managers.add(tutorial);
                managers.add(byDefault);
                workers.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(thread);
                    for (int n = 0; n < PER_THREAD; n++) {
                        int from = random.nextInt(ACCOUNTS);
                        int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                        long amount = 1 + random.nextInt(60);
                        int kind = random.nextInt(3);
                        try {
                            boolean done;
                            if (kind == 0) {
                                done = new Bank(tutorial).transfer("A" + from, "A" + to, amount).isCommitted();
                                rules1.incrementAndGet();
                            } else if (kind == 1) {
                                done = new Bank(byDefault).transfer("A" + from, "A" + to, amount).isCommitted();
                            } else {
                                // An update besides the transfer: the default rules fall back to the tutorial's.
                                // Exclusive and guarded operations first, the credit last (the tutorial's rules
                                // would otherwise undo a credit another transaction may have spent: README, limits).
                                int third = (to + 1) % ACCOUNTS == from ? (to + 2) % ACCOUNTS : (to + 1) % ACCOUNTS;
                                done = byDefault.run(List.of(
                                        Operation.update(account(third), new Document("$set", new Document("note", thread * 1000 + n)),
                                                null),
                                        Operation.increment(account(from), "balance", -amount,
                                                new Document("balance", new Document("$gte", amount))),
                                        Operation.increment(account(to), "balance", amount, null))).isCommitted();
                                rules1.incrementAndGet();
                            }
                            if (done) {
                                committed.incrementAndGet();
                            }
                        } catch (SimulatedCrash | TransactionException e) {
                            // stopped at a crash point (or lost to a takeover after one): recovery's to finish
                        }
                    }
                    return null;
                }));
            }
            pool.submit(() -> {
                while (!stop.get()) {
                    try {
                        recoverer.recover(Duration.ZERO);
                    } catch (TransactionException e) {
                        // a pass that failed: the next one tries again
                    }
                    Thread.sleep(100);
                }
                return null;
            });
            pool.submit(() -> {
                SplittableRandom random = new SplittableRandom(7);
                while (!stop.get()) {
                    DocumentRef ref = account(random.nextInt(ACCOUNTS));
                    long stored = ((Number) reader.read(ref).orElseThrow().get("balance")).longValue();
                    if (stored < 0) {
                        negative.add(ref + " stored " + stored);
                    }
                    try {
                        reader.readCommitted(List.of(account(0), account(1), account(2)));
                    } catch (TransactionException e) {
                        // no cut within the timeout while writers run: allowed, and not this test's subject
                    }
                }
                return null;
            });
            for (Future<?> worker : workers) {
                worker.get(10, TimeUnit.MINUTES); // a failure's timeout, not a measure
            }
        } finally {
            stop.set(true);
            pool.shutdown();
            assertThat(pool.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
            managers.forEach(TransactionManager::close);
        }

        // Recover until everything has ended: stale owners after their lease, orphans after their deadline.
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline && (open() > 0 || marked() > 0)) {
            mongo.expireLeases(mongo.database());
            recoverer.recover(Duration.ZERO);
            Thread.sleep(200);
        }
        assertThat(negative).as("a stored balance below zero").isEmpty();
        assertThat(open()).as("transactions not ended").isZero();
        assertThat(marked()).as("accounts with markers").isZero();
        long total = 0;
        for (Document a : setup.accounts().find()) {
            long balance = ((Number) a.get("balance")).longValue();
            assertThat(balance).as(a.toJson()).isNotNegative();
            total += balance;
        }
        assertThat(total).as("money conserved").isEqualTo(ACCOUNTS * OPENING);
        assertThat(crashes.get()).as("crashes happened").isPositive();
        assertThat(committed.get()).as("transfers committed").isPositive();
        assertThat(rules1.get()).as("tutorial-rules transactions ran").isPositive();
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions")
                .countDocuments(new Document("protocol", 2))).as("two-round transactions ran").isPositive();
    }

    private long open() {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments(
                new Document("state", new Document("$in", List.of("initial", "pending", "applied", "canceling"))));
    }

    private long marked() {
        return mongo.client().getDatabase(mongo.database()).getCollection(Bank.ACCOUNTS).countDocuments(new Document("$or", List.of(
                new Document("pendingTransactions.0", new Document("$exists", true)), new Document("_m2pc", new Document("$exists", true)))));
    }
}
