package io.mongo2pc.sweeps;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code finishInBackground}: a transfer returns at its commit point ({@code applied}) and the
 * manager's finisher thread releases the markers and moves it to {@code done}, many per request.
 * Atomicity and bounded markers must hold as with inline finishing: under many threads, when the
 * finisher crashes at any of its crash points (another instance recovers), and when one of its
 * acknowledgements is lost (the same process settles it). Here a transfer is two guarded
 * increments stored with the transaction ({@link Transfers}); the bank's tests run the same on
 * transfers in the tutorial's shape (subclasses set the managers' settings and the transfer).
 */
public class BackgroundFinishTest {
    @RegisterExtension
    protected static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final List<CrashPoint> FINISHER_POINTS = List.of(
            CrashPoint.before(Step.RELEASE, 0), CrashPoint.before(Step.RELEASE, 1),
            CrashPoint.after(Step.RELEASE, 0), CrashPoint.after(Step.RELEASE, 1),
            CrashPoint.before(Step.FINISH, -1), CrashPoint.after(Step.FINISH, -1));

    TransactionManager manager(String db, String app, MongoClient client, CrashHook hook, boolean background) {
        return configure(rules(TestManagers.crashing(client, db, app, hook)).finishInBackground(background)).build();
    }

    /** The rules of every manager: the tutorial's (the two-round tests: the default rules). */
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.twoRoundCommit(false);
    }

    /** The settings of every manager (the bank's codec, the two-round commit). */
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder;
    }

    /** Moves {@code amount} from {@code source} to {@code destination} on {@code manager} ({@link Transfers#of}). */
    protected TransactionOutcome transfer(TransactionManager manager, String db, String source, String destination, long amount) {
        return manager.run(Transfers.of(db, source, destination, amount));
    }

    @Test
    void sixteenThreads_transfersReturnApplied_andAreAllDoneWithoutMarkersOnceClosed() throws Exception {
        String db = mongo.database();
        int accounts = 8;
        try (TransactionManager manager = manager(db, "bg", mongo.client(), CrashHook.NONE, true)) {
            for (int i = 0; i < accounts; i++) {
                Transfers.createAccount(mongo.client().getDatabase(db), "acc" + i, 1_000L);
            }
            mongo.invariants().expectTotal(db, accounts * 1_000L);
            ExecutorService pool = Executors.newFixedThreadPool(16);
            List<Future<List<TransactionOutcome>>> futures = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                Random random = new Random(t);
                futures.add(pool.submit(() -> {
                    List<TransactionOutcome> outcomes = new ArrayList<>();
                    for (int n = 0; n < 100; n++) {
                        int from = random.nextInt(accounts);
                        int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
                        outcomes.add(transfer(manager, db, "acc" + from, "acc" + to, 1L + random.nextInt(400)));
                    }
                    return outcomes;
                }));
            }
            List<TransactionOutcome> outcomes = new ArrayList<>();
            for (Future<List<TransactionOutcome>> f : futures) {
                outcomes.addAll(f.get());
            }
            pool.shutdown();
            assertThat(outcomes).allSatisfy(o -> assertThat(o.state()).isIn(TransactionState.APPLIED, TransactionState.CANCELED));
            long committed = outcomes.stream().filter(TransactionOutcome::isCommitted).count();
            assertThat(committed).as("committed transfers").isGreaterThan(800);

            assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
            assertThat(manager.counts().get(TransactionState.DONE)).isEqualTo(committed);
            assertThat(manager.counts().get(TransactionState.APPLIED)).isZero();
            // The extension checks after each test: no open transaction, no marker, the total kept.
        }
    }

    @Test
    void finisherCrashesAtEachOfItsPoints_anotherInstanceRecovers_transferIsDoneOnce() throws Exception {
        for (CrashPoint point : FINISHER_POINTS) {
            String db = mongo.database() + "_" + point.step() + point.phase() + point.participant();
            createAccountsAAndB(db);
            AtomicInteger crashes = new AtomicInteger();
            CrashHook crash = (p, id) -> {
                if (p.equals(point) && crashes.getAndIncrement() == 0) {
                    throw new SimulatedCrash(p, id);
                }
            };
            TransactionManager owner = manager(db, "owner", mongo.client(), crash, true);
            TransactionOutcome outcome = transfer(owner, db, "A", "B", 100L);
            assertThat(outcome.state()).as(point.toString()).isEqualTo(TransactionState.APPLIED);
            assertThat(owner.awaitFinished(Duration.ofSeconds(10))).isTrue();
            owner.close();
            assertThat(crashes.get()).as("the finisher reached " + point).isEqualTo(1);
            String left = owner.inspect(outcome.id()).orElseThrow().state().stored();
            assertThat(left).as("after a crash at " + point).isEqualTo(point.step() == Step.FINISH && point.phase() == CrashPoint.Phase.AFTER
                    ? "done" : "applied");

            mongo.expireLeases(db);
            manager(db, "recoverer", mongo.newClient(), CrashHook.NONE, false).recover(Duration.ZERO);
            assertDoneOnce(db, outcome.id(), point.toString());
        }
    }

    @Test
    void finisherLosesAnAcknowledgementAtEachWrite_theSameProcessSettlesIt() throws Exception {
        for (CrashPoint point : FINISHER_POINTS) {
            if (point.phase() != CrashPoint.Phase.AFTER) {
                continue;
            }
            String db = mongo.database() + "_ack_" + point.step() + point.participant();
            createAccountsAAndB(db);
            AtomicInteger lost = new AtomicInteger();
            CrashHook loseAckOnce = (p, id) -> {
                if (p.equals(point) && lost.getAndIncrement() == 0) {
                    throw new MongoSocketWriteException("simulated lost acknowledgement at " + p,
                            new ServerAddress(), new IOException("connection reset"));
                }
            };
            TransactionOutcome outcome;
            try (TransactionManager owner = manager(db, "owner", mongo.client(), loseAckOnce, true)) {
                outcome = transfer(owner, db, "A", "B", 100L);
                assertThat(owner.awaitFinished(Duration.ofSeconds(10))).isTrue();
            }
            assertThat(lost.get()).as("acknowledgement lost at " + point).isGreaterThanOrEqualTo(1);
            assertDoneOnce(db, outcome.id(), "ack lost at " + point);
        }
    }

    @Test
    protected void finisherSendsItsReleasesAfterTheOwnersDeadline_theServerRefusesThem_andTheyAreRenewedAndSentAgain() throws Exception {
        // A 300 ms lease: the write deadline is 150 ms after each stamp. The finisher is held for
        // 400 ms after it built its batch's deadline, so the server refuses the release writes;
        // the batch must not move to done on that answer (markers would be left), but renew and
        // release again on its own.
        String db = mongo.database();
        createAccountsAAndB(db);
        mongo.invariants().expectTotal(db, 2_000L);
        AtomicInteger held = new AtomicInteger();
        CrashHook pause = (p, id) -> {
            if (p.equals(CrashPoint.before(Step.RELEASE, 1)) && held.getAndIncrement() == 0) {
                sleep(400);
            }
        };
        TransactionManager owner = configure(rules(TransactionManager.builder()).target("default", mongo.client()).database(db)
                .application("owner").lease(Duration.ofMillis(300)).crashHook(pause).finishInBackground(true)).build();
        TransactionOutcome outcome = transfer(owner, db, "A", "B", 100L);
        assertThat(owner.awaitFinished(Duration.ofSeconds(10))).isTrue();
        owner.close();

        assertThat(held.get()).as("the finisher was held, then went through the release again").isGreaterThanOrEqualTo(2);
        Document tx = owner.inspect(outcome.id()).orElseThrow().document();
        assertThat(tx.getString("state")).isEqualTo("done");
        assertThat(tx.getLong("epoch")).as("finished by its owner, not taken over").isEqualTo(1L);
        // The extension checks: no marker left, total kept.
    }

    @Test
    void aClosedManager_refusesNewTransactions_beforeWritingAnything() {
        String db = mongo.database();
        createAccountsAAndB(db);
        mongo.invariants().expectTotal(db, 2_000L);
        TransactionManager manager = manager(db, "bg", mongo.client(), CrashHook.NONE, true);
        assertThat(transfer(manager, db, "A", "B", 100L).isCommitted()).isTrue();
        manager.close();

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> transfer(manager, db, "A", "B", 100L))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(manager.counts().values().stream().mapToLong(Long::longValue).sum()).as("only the first transfer was written").isEqualTo(1L);
        assertThat(manager.counts().get(TransactionState.DONE)).isEqualTo(1L);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Accounts A and B with 1,000 each. */
    private void createAccountsAAndB(String db) {
        Transfers.createAccount(mongo.client().getDatabase(db), "A", 1_000L);
        Transfers.createAccount(mongo.client().getDatabase(db), "B", 1_000L);
    }

    private static void assertDoneOnce(String db, Object txId, String what) {
        for (Document account : mongo.client().getDatabase(db).getCollection("accounts").find()) {
            assertThat(account.keySet()).as(what + ": entries left on " + account.get("_id")).noneMatch(k -> LibraryFields.leftover(k));
        }
        Document tx = mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", txId)).first();
        assertThat(tx).as(what).isNotNull();
        assertThat(tx.getString("state")).as(what + ": " + tx.toJson()).isEqualTo("done");
        List<Long> balances = new ArrayList<>();
        for (String id : List.of("A", "B")) {
            balances.add(mongo.client().getDatabase(db).getCollection("accounts").find(new Document("_id", id)).first().getLong("balance"));
        }
        assertThat(balances).as(what + ": applied exactly once").containsExactly(900L, 1_100L);
        assertThat(new Invariants(mongo.client(), db).expectTotal(db, 2_000L).violations()).as(what).isEmpty();
        mongo.client().getDatabase(db).drop();
    }
}
