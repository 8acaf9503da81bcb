package io.mongo2pc.bank;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Migration in place: while a team switches, workers of the old hand-written tutorial application
 * (the tutorial's claim with findAndModify and its eight writes, plain driver) and mongo2pc workers
 * drain the same queue of transfers over the same accounts. Each transfer is claimed by exactly
 * one application and applied exactly once. The managers follow the tutorial's rules
 * ({@code twoRoundCommit(false)}), as an application must while hand-written tutorial code claims or
 * recovers its transactions.
 */
class TutorialCoexistenceTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void tutorialWorkersAndMongo2pcWorkers_drainOneQueue_eachTransferAppliedExactlyOnce() throws Exception {
        // given: 10 accounts rich enough that no debit is ever refused
        TransactionManager requester = Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client())
                .database(mongo.database()).application("requester")).build();
        Bank bank = new Bank(requester);
        for (int i = 0; i < 10; i++) {
            bank.createAccount("acc" + i, 10_000L);
        }
        mongo.invariants().expectTotal(mongo.database(), 100_000L);
        Random random = new Random(3);
        List<Object> queued = new ArrayList<>();
        for (int n = 0; n < 200; n++) {
            int from = random.nextInt(10);
            queued.add(bank.submit("acc" + from, "acc" + ((from + 1 + random.nextInt(9)) % 10), 1 + random.nextInt(50)));
        }

        // when: 3 tutorial threads and 3 mongo2pc threads (two managers, own clients)
        Map<Object, List<String>> runs = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        List<Future<?>> futures = new ArrayList<>();
        List<TransactionManager> managers = List.of(
                Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                        .application("m2pc-one")).build(),
                Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                        .application("m2pc-two")).build());
        for (int t = 0; t < 3; t++) {
            MongoDatabase tutorialDb = mongo.newClient().getDatabase(mongo.database());
            TutorialClient tutorial = new TutorialClient(tutorialDb.getCollection("accounts"), tutorialDb.getCollection("transactions"),
                    "tutorial-app");
            futures.add(pool.submit(() -> {
                try {
                    for (Optional<Object> id = tutorial.claimAndRun(); id.isPresent(); id = tutorial.claimAndRun()) {
                        runs.computeIfAbsent(id.get(), k -> new CopyOnWriteArrayList<>()).add("tutorial-app:done");
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
                return null;
            }));
            TransactionManager manager = managers.get(t % 2);
            futures.add(pool.submit(() -> {
                try {
                    for (Optional<TransactionOutcome> o = manager.claimAndRun(); o.isPresent(); o = manager.claimAndRun()) {
                        runs.computeIfAbsent(o.get().id(), k -> new CopyOnWriteArrayList<>())
                                .add(manager.settings().application() + ":" + o.get().state().stored());
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        // then
        assertThat(errors).isEmpty();
        assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(queued);
        assertThat(runs.values()).allSatisfy(r -> assertThat(r).hasSize(1));
        assertThat(runs.values().stream().map(r -> r.get(0))).anyMatch(r -> r.startsWith("tutorial-app"))
                .anyMatch(r -> r.startsWith("m2pc"));
        Map<Object, Long> expected = new HashMap<>();
        for (int i = 0; i < 10; i++) {
            expected.put("acc" + i, 10_000L);
        }
        for (Document tx : mongo.transactions(requester.settings().database()).find()) {
            assertThat(tx.getString("state")).isEqualTo("done");
            assertThat(runs.get(tx.get("_id")).get(0)).startsWith(tx.getString("application") + ":");
            expected.merge(tx.get("source"), -tx.getLong("value"), Long::sum);
            expected.merge(tx.get("destination"), tx.getLong("value"), Long::sum);
        }
        Map<Object, Long> actual = new HashMap<>();
        bank.accounts().find().forEach(d -> actual.put(d.get("_id"), d.getLong("balance")));
        assertThat(actual).isEqualTo(expected);
    }
}
