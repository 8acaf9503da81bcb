package io.mongo2pc.sweeps;

import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Stops a transaction at every crash point of the protocol (before each write, and after it: the
 * write applied but its acknowledgement lost), lets a different manager instance on another
 * client recover it, and checks atomicity: the transaction is terminal, applied exactly once if
 * done and not at all if canceled, no marker left. Then the same with a second crash during the
 * recovery, finished by a third instance; and with the acknowledgement lost and retried by the
 * same process. Here with generic increments (the operations stored with the transaction); the
 * bank's tests run the same sweep on transfers in the tutorial's shape (subclasses set the
 * managers' settings and how a transfer starts).
 */
public class CrashPointSweepTest {
    @RegisterExtension
    protected static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** A scenario: accounts A and B, and a transaction that either commits or cancels at B. */
    protected enum Scenario {
        /** A transfer of 100 from A to B: ends done. */
        COMMITS,
        /** A debit of A then a credit of B whose guard fails: the debit is undone, ends canceled. */
        CANCELS
    }

    private int round;
    /** Separate clients for the second and third instances, as separate processes would have. */
    private static MongoClient secondClient;
    private static MongoClient thirdClient;

    /** The server's clients end with the test class (a subclass runs on a server of its own). */
    @AfterAll
    static void forgetClients() {
        secondClient = null;
        thirdClient = null;
    }

    protected static MongoClient second() {
        if (secondClient == null) {
            secondClient = mongo.newClient();
        }
        return secondClient;
    }

    private static MongoClient third() {
        if (thirdClient == null) {
            thirdClient = mongo.newClient();
        }
        return thirdClient;
    }

    @Test
    void transfer_crashAtEveryPoint_recoveredByAnotherInstance_isAtomic() {
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint point : pointsReached(scenario)) {
                String db = freshDatabase();
                Object txId = runCrashingAt(db, scenario, point);
                afterCrash(db);
                mongo.expireLeases(db);
                RecoveryReport report = manager(db, "recoverer", second(), CrashHook.NONE).recover(Duration.ZERO);
                assertAtomic(db, scenario, point + " then recovery " + report, txId);
            }
        }
    }

    @Test
    void transfer_crashAtEveryPoint_thenCrashAgainDuringRecovery_recoveredByAThirdInstance() {
        Assumptions.assumeTrue(crashesTwice(), "the second crash is swept on these rules by another sweep");
        int combinations = 0;
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint first : pointsReached(scenario)) {
                for (CrashPoint second : recoveryPointsAfter(scenario, first)) {
                    String db = freshDatabase();
                    Object txId = runCrashingAt(db, scenario, first);
                    afterCrash(db);
                    mongo.expireLeases(db);
                    TransactionManager secondInstance = manager(db, "recoverer-1", second(), crashAt(second));
                    assertThatThrownBy(() -> secondInstance.recover(Duration.ZERO)).isInstanceOf(SimulatedCrash.class);
                    mongo.expireLeases(db);
                    manager(db, "recoverer-2", third(), CrashHook.NONE).recover(Duration.ZERO);
                    assertAtomic(db, scenario, first + " then " + second + " during recovery", txId);
                    combinations++;
                }
            }
        }
        assertThat(combinations).as("double-crash combinations explored").isGreaterThan(20);
    }

    @Test
    void transfer_acknowledgementLostAtEveryWrite_isRetriedByTheSameProcessWithoutDoubleApply() {
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint point : pointsReached(scenario)) {
                if (point.phase() != CrashPoint.Phase.AFTER) {
                    continue;
                }
                String db = freshDatabase();
                AtomicBoolean lost = new AtomicBoolean();
                CrashHook loseAckOnce = (p, id) -> {
                    if (p.equals(point) && lost.compareAndSet(false, true)) {
                        throw new MongoSocketWriteException("simulated lost acknowledgement at " + p,
                                new ServerAddress(), new IOException("connection reset"));
                    }
                };
                TransactionOutcome outcome = start(db, scenario, manager(db, "owner", mongo.client(), loseAckOnce));
                assertThat(lost).as("ack lost at " + point).isTrue();
                assertThat(outcome.state()).as(point.toString()).isEqualTo(expectedWithoutCrash(scenario));
                assertAtomic(db, scenario, "ack lost at " + point, outcome.id());
            }
        }
    }

    /** True if the sweep also crashes a second time during recovery (a subclass whose rules another sweep covers so may skip it). */
    protected boolean crashesTwice() {
        return true;
    }

    // ---- the scenarios ----------------------------------------------------------------------

    /** A database of its own for one round, with the documents of {@link #populate}. */
    protected String freshDatabase() {
        String db = mongo.database() + "_" + (++round) + "_";
        populate(db);
        mongo.invariants().expectTotal(db, total(false));
        return db;
    }

    // ---- the workload (a subclass may run another: the bank's payments) --------------------

    /** The documents a round starts with: accounts A and B of 1000 each in the tutorial's shape. */
    protected void populate(String db) {
        Transfers.createAccount(mongo.client().getDatabase(db), "A", 1000L);
        Transfers.createAccount(mongo.client().getDatabase(db), "B", 1000L);
    }

    /** What the scenario's transaction changes, as stored: the balances of A and B. */
    protected List<Object> observed(String db) {
        Function<String, Long> balance = id -> mongo.client().getDatabase(db).getCollection("accounts")
                .find(new Document("_id", id)).first().getLong("balance");
        return List.of(balance.apply("A"), balance.apply("B"));
    }

    /** {@link #observed} once the scenario's transaction ended {@code done}, or with nothing in effect. */
    protected List<Object> expected(Scenario scenario, boolean done) {
        return done ? List.of(900L, 1100L) : List.of(1000L, 1000L);
    }

    /** The total of the accounts' balances once the transaction ended {@code done}, or with nothing in effect. */
    protected long total(boolean done) {
        return 2000L;
    }

    /** The collections whose documents must carry no lock, entry or marker once the transaction ended. */
    protected List<String> collections() {
        return List.of("accounts");
    }

    private TransactionManager manager(String db, String app, MongoClient client, CrashHook hook) {
        return configure(rules(TestManagers.crashing(client, db, app, hook))).build();
    }

    /** The rules of every manager of the sweep: the tutorial's, finished inline (the two-round sweep: the default rules). */
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.twoRoundCommit(false).finishInBackground(false);
    }

    /** The settings of every manager of the sweep (the bank's codec, the two-round commit). */
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder;
    }

    /**
     * Called after the owner crashed and before another instance recovers: the two-round sweeps
     * make prepares without a transaction document resolvable there ({@link Orphans}).
     */
    protected void afterCrash(String db) {
    }

    /** Runs the scenario's transaction on {@code manager}: its commit is {@link #transfer} (100 from A to B). */
    protected TransactionOutcome start(String db, Scenario scenario, TransactionManager manager) {
        if (scenario == Scenario.COMMITS) {
            return transfer(db, manager);
        }
        return manager.run(List.of(
                Operation.increment(DocumentRef.of(db, "accounts", "A"), "balance", -100L,
                        new Document("balance", new Document("$gte", 100L))),
                Operation.increment(DocumentRef.of(db, "accounts", "B"), "balance", 100L,
                        new Document("frozen", new Document("$ne", false)).append("balance", new Document("$lt", 0L)))));
    }

    /** 100 from A to B: two guarded increments, stored with the transaction. */
    protected TransactionOutcome transfer(String db, TransactionManager manager) {
        return manager.run(Transfers.of(db, "A", "B", 100L));
    }

    private static TransactionState expectedWithoutCrash(Scenario scenario) {
        return scenario == Scenario.COMMITS ? TransactionState.DONE : TransactionState.CANCELED;
    }

    /** Runs the scenario with a hook that crashes the first time {@code point} is reached; returns the transaction id. */
    private Object runCrashingAt(String db, Scenario scenario, CrashPoint point) {
        List<Object> ids = new ArrayList<>();
        CrashHook hook = (p, id) -> {
            synchronized (ids) { // the hook runs on round 1's sender threads too
                if (id != null && !ids.contains(id)) {
                    ids.add(id);
                }
            }
            if (p.equals(point)) {
                throw new SimulatedCrash(p, id);
            }
        };
        assertThatThrownBy(() -> start(db, scenario, manager(db, "owner", mongo.client(), hook)))
                .as("crash at " + point).isInstanceOf(SimulatedCrash.class);
        synchronized (ids) {
            return ids.isEmpty() ? null : ids.get(0);
        }
    }

    private static CrashHook crashAt(CrashPoint point) {
        return (p, id) -> {
            if (p.equals(point)) {
                throw new SimulatedCrash(p, id);
            }
        };
    }

    /** The fewest crash points a clean run of {@code scenario} must reach. */
    protected int minPoints(Scenario scenario) {
        return 10;
    }

    /** Every crash point a clean run of the scenario reaches, in order. */
    protected List<CrashPoint> pointsReached(Scenario scenario) {
        String db = freshDatabase();
        // The hook runs on the caller's thread and on the manager's own (round 1's senders, the finisher).
        Set<CrashPoint> points = Collections.synchronizedSet(new LinkedHashSet<>());
        TransactionOutcome outcome = start(db, scenario, manager(db, "probe", mongo.client(), (p, id) -> points.add(p)));
        assertThat(outcome.state()).isEqualTo(expectedWithoutCrash(scenario));
        assertThat(points).hasSizeGreaterThanOrEqualTo(minPoints(scenario));
        mongo.client().getDatabase(db).drop(); // a probe: its total need not be the one the round started with
        synchronized (points) {
            return List.copyOf(points);
        }
    }

    /** The crash points a recovery reaches after the scenario crashed at {@code first}. */
    private List<CrashPoint> recoveryPointsAfter(Scenario scenario, CrashPoint first) {
        String db = freshDatabase();
        runCrashingAt(db, scenario, first);
        afterCrash(db);
        mongo.expireLeases(db);
        Set<CrashPoint> points = Collections.synchronizedSet(new LinkedHashSet<>());
        manager(db, "probe-recoverer", mongo.client(), (p, id) -> points.add(p)).recover(Duration.ZERO);
        mongo.client().getDatabase(db).drop();
        synchronized (points) {
            return List.copyOf(points);
        }
    }

    private void assertAtomic(String db, Scenario scenario, String what, Object txId) {
        Document tx = txId == null ? null : mongo.client().getDatabase(db).getCollection("transactions")
                .find(new Document("_id", txId)).first();
        boolean done = false;
        if (tx == null) {
            // Crashed before its document was written: nothing may be in effect.
            assertThat(observed(db)).as(what).isEqualTo(expected(scenario, false));
        } else {
            TransactionState state = TransactionState.parse(tx.getString("state")).orElseThrow();
            assertThat(state.isTerminal()).as(what + ": terminal, was " + tx.toJson()).isTrue();
            done = state == TransactionState.DONE;
            if (done) {
                assertThat(scenario).as(what + ": only the committing scenario may end done").isEqualTo(Scenario.COMMITS);
                assertThat(observed(db)).as(what + ": applied exactly once").isEqualTo(expected(scenario, true));
            } else {
                assertThat(observed(db)).as(what + ": nothing in effect").isEqualTo(expected(scenario, false));
            }
        }
        assertThat(new Invariants(mongo.client(), db).expectTotal(db, total(done)).violations()).as(what).isEmpty();
        Leftovers.assertNoneLeft(mongo.client().getDatabase(db), collections(), what);
        // Checked: drop it so that the server stays small over hundreds of rounds.
        mongo.client().getDatabase(db).drop();
    }
}
