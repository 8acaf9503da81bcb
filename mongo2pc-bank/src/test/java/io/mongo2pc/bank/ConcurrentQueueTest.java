package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoClient;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guarantees 2 and 5 under concurrency: many workers of two applications, on separate clients,
 * drain one queue; each queued transfer is claimed and run by exactly one of them, and the final
 * balances are exactly the replay of the transfers that ended {@code done}. Many threads
 * transferring directly between a few hot accounts never overdraw one and conserve the total.
 */
@Tag("slow")
class ConcurrentQueueTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ACCOUNTS = 20;
    private static final long OPENING = 1_000L;

    private TransactionManager manager(MongoClient client, String application) {
        return Bank.configure(TestManagers.builder(client, mongo.database(), application).finishInBackground(false)).build();
    }

    private static String account(int i) {
        return String.format("acc%02d", i);
    }

    @Test
    void queue_drainedByEightWorkersOfTwoApplications_eachTransferRunsExactlyOnce() throws Exception {
        // given: 20 accounts and 300 queued random transfers, some larger than any balance can cover
        TransactionManager requester = manager(mongo.client(), "requester");
        Bank bank = new Bank(requester);
        for (int i = 0; i < ACCOUNTS; i++) {
            bank.createAccount(account(i), OPENING);
        }
        mongo.invariants().expectTotal(mongo.database(), ACCOUNTS * OPENING);
        Random random = new Random(42);
        List<Object> queued = new ArrayList<>();
        for (int n = 0; n < 300; n++) {
            int from = random.nextInt(ACCOUNTS);
            int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
            long amount = 1 + random.nextInt(n % 10 == 0 ? 3_000 : 600);
            queued.add(bank.submit(account(from), account(to), amount));
        }
        assertThat(requester.counts().get(TransactionState.INITIAL)).isEqualTo(300L);

        // when: 8 threads, 4 on each of two managers with their own clients and application names
        List<TransactionManager> workers = List.of(manager(mongo.newClient(), "worker-one"), manager(mongo.newClient(), "worker-two"));
        Map<Object, List<String>> runs = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            TransactionManager worker = workers.get(t % 2);
            String name = worker.settings().application() + "#" + t;
            futures.add(pool.submit(() -> {
                start.await();
                try {
                    while (true) {
                        Optional<TransactionOutcome> outcome = worker.claimAndRun();
                        if (outcome.isEmpty()) {
                            return null;
                        }
                        runs.computeIfAbsent(outcome.get().id(), id -> new CopyOnWriteArrayList<>())
                                .add(name + ":" + outcome.get().state().stored());
                    }
                } catch (Throwable e) {
                    errors.add(e);
                    throw e;
                }
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        // then: no errors; each transfer claimed and run exactly once, by one of the workers
        assertThat(errors).isEmpty();
        assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(queued);
        assertThat(runs.values()).allSatisfy(r -> assertThat(r).as("runs of one transaction").hasSize(1));
        Map<TransactionState, Long> counts = requester.counts();
        assertThat(counts.get(TransactionState.DONE) + counts.get(TransactionState.CANCELED)).isEqualTo(300L);
        assertThat(counts.get(TransactionState.CANCELED)).as("some transfers cannot be covered").isPositive();
        assertThat(counts.get(TransactionState.DONE)).isPositive();

        // and: the balances are the replay of exactly the done transfers
        Map<Object, Long> expected = new HashMap<>();
        for (int i = 0; i < ACCOUNTS; i++) {
            expected.put(account(i), OPENING);
        }
        for (Document tx : mongo.transactions(requester.settings().database()).find()) {
            String state = tx.getString("state");
            String runBy = runs.get(tx.get("_id")).get(0);
            assertThat(runBy).as("outcome reported = outcome stored for %s", tx.get("_id")).endsWith(":" + state);
            assertThat(tx.getString("application")).isIn("worker-one", "worker-two");
            assertThat(runBy).startsWith(tx.getString("application") + "#");
            if (state.equals("done")) {
                long value = tx.getLong("value");
                expected.merge(tx.get("source"), -value, Long::sum);
                expected.merge(tx.get("destination"), value, Long::sum);
            } else {
                assertThat(state).isEqualTo("canceled");
                assertThat(tx.getString("reason")).contains("the debit needs");
            }
        }
        Map<Object, Long> actual = new HashMap<>();
        bank.accounts().find().forEach(d -> actual.put(d.get("_id"), d.getLong("balance")));
        assertThat(actual).isEqualTo(expected);
    }

    @Test
    void transfers_manyThreadsOnThreeHotAccounts_neverOverdrawAndConserveTheTotal() throws Exception {
        // given: three hot accounts
        List<TransactionManager> managers = List.of(manager(mongo.client(), "hot-one"), manager(mongo.newClient(), "hot-two"));
        Bank setup = new Bank(managers.get(0));
        List<String> hot = List.of("H1", "H2", "H3");
        for (String id : hot) {
            setup.createAccount(id, 500L);
        }
        mongo.invariants().expectTotal(mongo.database(), 1_500L);

        // a watcher reading balances the whole time: a guarded debit must never show a negative balance
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong negativeSeen = new AtomicLong();
        Thread watcher = new Thread(() -> {
            while (running.get()) {
                for (Document d : setup.accounts().find().projection(new Document("pendingTransactions", 0))) {
                    if (((Number) d.get("balance")).longValue() < 0) {
                        negativeSeen.incrementAndGet();
                    }
                }
            }
        });
        watcher.start();

        // when: 8 threads, 60 transfers each, random direction, amounts up to 400
        Map<Object, TransactionOutcome> outcomes = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Bank bank = new Bank(managers.get(t % 2));
            Random random = new Random(t);
            futures.add(pool.submit(() -> {
                for (int n = 0; n < 60; n++) {
                    List<String> pair = new ArrayList<>(hot);
                    Collections.shuffle(pair, random);
                    TransactionOutcome o = bank.transfer(pair.get(0), pair.get(1), 1 + random.nextInt(400));
                    assertThat(outcomes.put(o.id(), o)).isNull();
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        running.set(false);
        watcher.join();

        // then
        assertThat(negativeSeen.get()).as("negative balances seen while transfers ran").isZero();
        assertThat(outcomes).hasSize(480);
        assertThat(outcomes.values()).anyMatch(TransactionOutcome::isCanceled).anyMatch(TransactionOutcome::isDone);
        Map<Object, Long> expected = new HashMap<>(Map.of("H1", 500L, "H2", 500L, "H3", 500L));
        for (Document tx : mongo.transactions(managers.get(0).settings().database()).find()) {
            TransactionOutcome o = outcomes.get(tx.get("_id"));
            assertThat(tx.getString("state")).isEqualTo(o.state().stored());
            if (o.isDone()) {
                expected.merge(tx.get("source"), -tx.getLong("value"), Long::sum);
                expected.merge(tx.get("destination"), tx.getLong("value"), Long::sum);
            }
        }
        Map<Object, Long> actual = new HashMap<>();
        setup.accounts().find().forEach(d -> actual.put(d.get("_id"), d.getLong("balance")));
        assertThat(actual).isEqualTo(expected);
        assertThat(actual.values()).allSatisfy(b -> assertThat(b).isNotNegative());
    }

    @Test
    void recovery_fourRecoverersOfTwoApplicationsRace_eachStaleTransferFinishedExactlyOnce() throws Exception {
        // given: 80 transfers among 10 accounts, each owner killed at a random crash point
        TransactionManager setupManager = manager(mongo.client(), "setup");
        Bank setup = new Bank(setupManager);
        for (int i = 0; i < 10; i++) {
            setup.createAccount(account(i), OPENING);
        }
        mongo.invariants().expectTotal(mongo.database(), 10 * OPENING);
        // the points a transfer passes where it leaves an open transaction behind
        List<io.mongo2pc.spi.CrashPoint> points = new ArrayList<>();
        points.add(io.mongo2pc.spi.CrashPoint.after(io.mongo2pc.spi.CrashPoint.Step.INSERT, -1));
        for (io.mongo2pc.spi.CrashPoint.Step step : List.of(io.mongo2pc.spi.CrashPoint.Step.APPLY, io.mongo2pc.spi.CrashPoint.Step.RELEASE,
                io.mongo2pc.spi.CrashPoint.Step.UNDO)) {
            for (int p : List.of(0, 1)) {
                points.add(io.mongo2pc.spi.CrashPoint.before(step, p));
                points.add(io.mongo2pc.spi.CrashPoint.after(step, p));
            }
        }
        for (io.mongo2pc.spi.CrashPoint.Step step : List.of(io.mongo2pc.spi.CrashPoint.Step.COMMIT, io.mongo2pc.spi.CrashPoint.Step.FINISH,
                io.mongo2pc.spi.CrashPoint.Step.BEGIN_CANCEL, io.mongo2pc.spi.CrashPoint.Step.FINISH_CANCEL)) {
            points.add(io.mongo2pc.spi.CrashPoint.before(step, -1));
        }
        points.add(io.mongo2pc.spi.CrashPoint.after(io.mongo2pc.spi.CrashPoint.Step.COMMIT, -1));
        points.add(io.mongo2pc.spi.CrashPoint.after(io.mongo2pc.spi.CrashPoint.Step.BEGIN_CANCEL, -1));
        Random random = new Random(7);
        for (int n = 0; n < 80; n++) {
            io.mongo2pc.spi.CrashPoint crashAt = points.get(random.nextInt(points.size()));
            AtomicBoolean armed = new AtomicBoolean(true);
            // Round 1 inserts the document pending (no commit insert): every point leaves a transaction for recovery.
            TransactionManager owner = Bank.configure(TransactionManager.builder().finishInBackground(false).commitInsert(false).target("default", mongo.client())
                    .database(mongo.database()).application("owner").crashHook((point, id) -> {
                        if (point.equals(crashAt) && armed.compareAndSet(true, false)) {
                            throw new IllegalStateException("owner killed at " + point);
                        }
                    })).build();
            int from = random.nextInt(10);
            try {
                new Bank(owner).transfer(account(from), account((from + 1 + random.nextInt(9)) % 10), 1 + random.nextInt(1_200));
            } catch (IllegalStateException killed) {
                assertThat(killed.getMessage()).startsWith("owner killed");
            }
        }
        Map<TransactionState, Long> before = setupManager.counts();
        long stale = before.get(TransactionState.PENDING) + before.get(TransactionState.APPLIED) + before.get(TransactionState.CANCELING);
        assertThat(stale).as("transfers left half-done").isGreaterThan(30);

        // when: the dead owners' leases run out, and four recoverers on two managers with their own
        // clients race over the same stale transactions
        mongo.expireLeases(mongo.database());
        List<TransactionManager> recoverers = List.of(manager(mongo.newClient(), "recover-one"), manager(mongo.newClient(), "recover-two"));
        AtomicLong finished = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            TransactionManager recoverer = recoverers.get(t % 2);
            futures.add(pool.submit(() -> {
                start.await();
                for (int pass = 0; pass < 3; pass++) {
                    finished.addAndGet(recoverer.recover(java.time.Duration.ZERO).finished());
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        finished.addAndGet(recoverers.get(0).recover(java.time.Duration.ZERO).finished());

        // then: each stale transfer reported finished by exactly one recoverer, all terminal
        assertThat(finished.get()).as("transactions finished (each by exactly one recoverer)").isEqualTo(stale);
        Map<TransactionState, Long> after = setupManager.counts();
        long written = mongo.transactions(setupManager.settings().database()).countDocuments();
        assertThat(after.get(TransactionState.DONE) + after.get(TransactionState.CANCELED)).isEqualTo(written);
        Map<Object, Long> expected = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            expected.put(account(i), OPENING);
        }
        for (Document tx : mongo.transactions(setupManager.settings().database()).find()) {
            assertThat(TransactionState.parse(tx.getString("state")).orElseThrow().isTerminal()).as(tx.toJson()).isTrue();
            if (tx.getString("state").equals("done")) {
                expected.merge(tx.get("source"), -tx.getLong("value"), Long::sum);
                expected.merge(tx.get("destination"), tx.getLong("value"), Long::sum);
            }
        }
        Map<Object, Long> actual = new HashMap<>();
        setup.accounts().find().forEach(d -> actual.put(d.get("_id"), d.getLong("balance")));
        assertThat(actual).as("balances = opening + done transfers").isEqualTo(expected);
        // and pruning removes every finished transaction, leaving the accounts as the tutorial shapes them
        assertThat(setupManager.prune(java.time.Duration.ZERO, io.mongo2pc.PruneOptions.builder().force(true).includeCanceled(true).build())
                .pruned()).isEqualTo(written);
        for (Document account : setup.accounts().find()) {
            assertThat(account.keySet()).as("account fields (the version aside: it counts commits)").filteredOn(k -> !k.equals(LibraryFields.VERSION))
                    .containsExactlyInAnyOrder("_id", "balance", "pendingTransactions");
        }
    }
}
