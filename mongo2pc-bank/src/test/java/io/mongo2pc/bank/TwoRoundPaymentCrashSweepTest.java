package io.mongo2pc.bank;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import org.bson.Document;

import java.time.Duration;
import java.util.List;

/**
 * Core's crash-point sweep ({@link io.mongo2pc.sweeps.CrashPointSweepTest}) on {@code pay} under
 * the two-round commit: the order's update, the debit and the payment's insert prepared in one
 * round, stopped before and after each prepare (so with some prepares landed and the others not,
 * and prepares without a transaction document, which the sweep resolves behind a tombstone past
 * their deadline), the insert, the commit, each release and done, the cancel and each undo;
 * recovered by another instance, after a second crash in the recovery, and with every
 * acknowledgement lost once. Atomic: Paid, debited and recorded together, or none of them, and no
 * lock, marker or entry left. The committing scenario pays o1 (30 of alice's 100), the canceling
 * one o2 (500: the debit's guard refuses).
 */
class TwoRoundPaymentCrashSweepTest extends io.mongo2pc.sweeps.CrashPointSweepTest {
    private static final Duration SKEW = Duration.ofMillis(100);

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return Bank.configure(builder).twoRoundCommit(true).lease(Duration.ofSeconds(1)).maxClockSkew(SKEW);
    }

    @Override
    protected void afterCrash(String db) {
        io.mongo2pc.sweeps.Orphans.expire(mongo.client().getDatabase(db), SKEW);
    }

    @Override
    protected void populate(String db) {
        TransactionManager setup = Bank.configure(io.mongo2pc.testing.TestManagers.builder(mongo.client(), db, "setup")).build();
        new Bank(setup).createAccount("alice", 100L);
        new Payments(setup).createOrder("o1", 30L);
        new Payments(setup).createOrder("o2", 500L);
    }

    @Override
    protected TransactionOutcome start(String db, Scenario scenario, TransactionManager manager) {
        return new Payments(manager).pay(scenario == Scenario.COMMITS ? "o1" : "o2", "alice");
    }

    @Override
    protected List<Object> observed(String db) {
        MongoDatabase d = mongo.client().getDatabase(db);
        return List.of(d.getCollection(Payments.ORDERS).find(new Document("_id", "o1")).first().getString("state"),
                d.getCollection(Payments.ORDERS).find(new Document("_id", "o2")).first().getString("state"),
                d.getCollection(Bank.ACCOUNTS).find(new Document("_id", "alice")).first().getLong("balance"),
                d.getCollection(Payments.PAYMENTS).countDocuments());
    }

    @Override
    protected List<Object> expected(Scenario scenario, boolean done) {
        return done ? List.of("Paid", "UnPaid", 70L, 1L) : List.of("UnPaid", "UnPaid", 100L, 0L);
    }

    @Override
    protected long total(boolean done) {
        return done ? 70L : 100L;
    }

    @Override
    protected List<String> collections() {
        return List.of(Bank.ACCOUNTS, Payments.ORDERS, Payments.PAYMENTS);
    }
}
