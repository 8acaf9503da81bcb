package io.mongo2pc.bank;

import com.mongodb.MongoSocketWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code pay} under the two-round commit (the order's update, the debit and the payment's insert
 * prepared in one round) stopped at every crash point: before and after each prepare (so with
 * some prepares landed and the others not, and prepares without a transaction document, which the
 * sweep resolves behind a tombstone past their deadline), the insert, the commit, each release and
 * done, the cancel and each undo. Another instance recovers it; then the same with a second crash
 * in the recovery; and every acknowledgement lost once. Atomic: Paid, debited and recorded
 * together, or none of them, and no lock, marker or entry left.
 */
class TwoRoundPaymentCrashSweepTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SKEW = Duration.ofMillis(100);
    private static MongoClient secondClient;
    private static MongoClient thirdClient;
    private int round;

    /** Pays o1 (30) from alice (100): commits; or o1 priced 500: the debit's guard refuses, it cancels. */
    enum Scenario { COMMITS, CANCELS }

    @AfterAll
    static void forgetClients() {
        secondClient = null;
        thirdClient = null;
    }

    private static MongoClient second() {
        return secondClient == null ? secondClient = mongo.newClient() : secondClient;
    }

    private static MongoClient third() {
        return thirdClient == null ? thirdClient = mongo.newClient() : thirdClient;
    }

    private static TransactionManager manager(String db, String app, MongoClient client, CrashHook hook) {
        return Bank.configure(TestManagers.crashing(client, db, app, hook)).twoRoundCommit(true).lease(LEASE)
                .maxClockSkew(SKEW).build();
    }

    private String freshDatabase(Scenario scenario) {
        String db = mongo.database() + "_p" + (++round) + "_";
        TransactionManager setup = manager(db, "setup", mongo.client(), CrashHook.NONE);
        new Bank(setup).createAccount("alice", 100L);
        new Payments(setup).createOrder("o1", scenario == Scenario.COMMITS ? 30L : 500L);
        mongo.invariants().expectTotal(db, 100L);
        return db;
    }

    private static TransactionOutcome pay(TransactionManager manager) {
        return new Payments(manager).pay("o1", "alice");
    }

    @Test
    void pay_crashAtEveryPoint_recoveredByAnotherInstance_isAtomic() {
        int runs = 0;
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint point : pointsReached(scenario)) {
                String db = freshDatabase(scenario);
                Object txId = runCrashingAt(db, point);
                afterCrash(db);
                mongo.expireLeases(db);
                manager(db, "recoverer", second(), CrashHook.NONE).recover(Duration.ZERO);
                assertAtomic(db, point + " then recovery", txId);
                runs++;
            }
        }
        assertThat(runs).as("crash points explored").isGreaterThan(20);
    }

    @Test
    void pay_crashAtEveryPoint_thenCrashAgainDuringRecovery_recoveredByAThirdInstance() {
        int combinations = 0;
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint first : pointsReached(scenario)) {
                for (CrashPoint again : recoveryPointsAfter(scenario, first)) {
                    String db = freshDatabase(scenario);
                    Object txId = runCrashingAt(db, first);
                    afterCrash(db);
                    mongo.expireLeases(db);
                    TransactionManager secondInstance = manager(db, "recoverer-1", second(), crashAt(again));
                    assertThatThrownBy(() -> secondInstance.recover(Duration.ZERO)).isInstanceOf(SimulatedCrash.class);
                    afterCrash(db);
                    mongo.expireLeases(db);
                    manager(db, "recoverer-2", third(), CrashHook.NONE).recover(Duration.ZERO);
                    assertAtomic(db, first + " then " + again + " during recovery", txId);
                    combinations++;
                }
            }
        }
        assertThat(combinations).as("double-crash combinations explored").isGreaterThan(10);
    }

    @Test
    void pay_acknowledgementLostAtEveryWrite_isRetriedByTheSameProcessWithoutDoubleApply() {
        int runs = 0;
        for (Scenario scenario : Scenario.values()) {
            for (CrashPoint point : pointsReached(scenario)) {
                if (point.phase() != CrashPoint.Phase.AFTER) {
                    continue;
                }
                String db = freshDatabase(scenario);
                AtomicBoolean lost = new AtomicBoolean();
                CrashHook loseAckOnce = (p, id) -> {
                    if (p.equals(point) && lost.compareAndSet(false, true)) {
                        throw new MongoSocketWriteException("simulated lost acknowledgement at " + p,
                                new ServerAddress(), new IOException("connection reset"));
                    }
                };
                TransactionOutcome outcome = pay(manager(db, "owner", mongo.client(), loseAckOnce));
                assertThat(lost).as("ack lost at " + point).isTrue();
                assertThat(outcome.state()).as(point + ": " + outcome.reason())
                        .isEqualTo(scenario == Scenario.COMMITS ? TransactionState.DONE : TransactionState.CANCELED);
                assertAtomic(db, "ack lost at " + point, outcome.id());
                runs++;
            }
        }
        assertThat(runs).isGreaterThan(10);
    }

    private Object runCrashingAt(String db, CrashPoint point) {
        List<Object> ids = new ArrayList<>();
        CrashHook hook = (p, id) -> {
            if (id != null && !ids.contains(id)) {
                ids.add(id);
            }
            if (p.equals(point)) {
                throw new SimulatedCrash(p, id);
            }
        };
        assertThatThrownBy(() -> pay(manager(db, "owner", mongo.client(), hook))).as("crash at " + point)
                .isInstanceOf(SimulatedCrash.class);
        return ids.isEmpty() ? null : ids.get(0);
    }

    private static CrashHook crashAt(CrashPoint point) {
        return (p, id) -> {
            if (p.equals(point)) {
                throw new SimulatedCrash(p, id);
            }
        };
    }

    private List<CrashPoint> pointsReached(Scenario scenario) {
        String db = freshDatabase(scenario);
        Set<CrashPoint> points = new LinkedHashSet<>();
        TransactionOutcome outcome = pay(manager(db, "probe", mongo.client(), (p, id) -> points.add(p)));
        assertThat(outcome.state()).isEqualTo(scenario == Scenario.COMMITS ? TransactionState.DONE : TransactionState.CANCELED);
        assertThat(points).contains(CrashPoint.before(CrashPoint.Step.APPLY, 0), CrashPoint.before(CrashPoint.Step.APPLY, 2));
        mongo.client().getDatabase(db).drop();
        return List.copyOf(points);
    }

    private List<CrashPoint> recoveryPointsAfter(Scenario scenario, CrashPoint first) {
        String db = freshDatabase(scenario);
        runCrashingAt(db, first);
        afterCrash(db);
        mongo.expireLeases(db);
        Set<CrashPoint> points = new LinkedHashSet<>();
        manager(db, "probe-recoverer", mongo.client(), (p, id) -> points.add(p)).recover(Duration.ZERO);
        mongo.client().getDatabase(db).drop();
        return List.copyOf(points);
    }

    /**
     * Prepares of a transaction without a document are resolved once past their deadline plus the
     * skew: waits for that (a transaction with a document is recovery's once its lease ran out).
     */
    private static void afterCrash(String db) {
        MongoDatabase d = mongo.client().getDatabase(db);
        Instant latest = null;
        for (String collection : d.listCollectionNames().into(new ArrayList<>())) {
            if (collection.startsWith("transactions")) {
                continue;
            }
            for (Document doc : d.getCollection(collection).find()) {
                List<Date> untils = new ArrayList<>();
                Document lock = doc.get("_m2pc", Document.class);
                if (lock != null && withoutDocument(d, lock.get("tx"))) {
                    untils.add(lock.getDate("until"));
                }
                if (doc.getList("pendingTransactions", Object.class, List.of()).stream().anyMatch(id -> withoutDocument(d, id))) {
                    doc.forEach((key, value) -> {
                        if (key.startsWith("_m2pc_") && value instanceof Document entry && entry.get("until") instanceof Date until) {
                            untils.add(until);
                        }
                    });
                }
                for (Date until : untils) {
                    latest = latest == null || until.toInstant().isAfter(latest) ? until.toInstant() : latest;
                }
            }
        }
        if (latest != null) {
            long wait = Duration.between(Instant.now(), latest.plus(SKEW).plusMillis(50)).toMillis(); // the server's clock is this host's
            if (wait > 0) {
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static boolean withoutDocument(MongoDatabase d, Object txId) {
        return d.getCollection("transactions").find(new Document("_id", txId)).first() == null;
    }

    private void assertAtomic(String db, String what, Object txId) {
        MongoDatabase d = mongo.client().getDatabase(db);
        Document tx = txId == null ? null : d.getCollection("transactions").find(new Document("_id", txId)).first();
        String order = d.getCollection(Payments.ORDERS).find(new Document("_id", "o1")).first().getString("state");
        long balance = d.getCollection(Bank.ACCOUNTS).find(new Document("_id", "alice")).first().getLong("balance");
        long payments = d.getCollection(Payments.PAYMENTS).countDocuments();
        boolean done = tx != null && TransactionState.parse(tx.getString("state")).orElseThrow() == TransactionState.DONE;
        if (tx != null) {
            assertThat(TransactionState.parse(tx.getString("state")).orElseThrow().isTerminal()).as(what + ": terminal, was " + tx.toJson())
                    .isTrue();
        }
        if (done) {
            assertThat(List.of(order, balance, payments)).as(what + ": all in effect").containsExactly("Paid", 70L, 1L);
        } else {
            assertThat(List.of(order, balance, payments)).as(what + ": nothing in effect").containsExactly("UnPaid", 100L, 0L);
        }
        assertThat(new Invariants(mongo.client(), db).expectTotal(db, done ? 70L : 100L).violations()).as(what).isEmpty();
        for (String collection : List.of(Bank.ACCOUNTS, Payments.ORDERS, Payments.PAYMENTS)) {
            for (Document doc : d.getCollection(collection).find()) {
                assertThat(doc.keySet()).as(what + ": lock or entry left on " + doc.toJson()).noneMatch(k -> k.startsWith("_m2pc"));
                assertThat(doc.getList("pendingTransactions", Object.class, List.of())).as(what + ": marker left").isEmpty();
            }
        }
        d.drop();
    }
}
