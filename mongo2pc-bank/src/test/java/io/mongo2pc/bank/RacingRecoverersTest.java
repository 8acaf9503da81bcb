package io.mongo2pc.bank;

import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Takeover: five recoverers racing over 100 stale transactions finish each exactly once. */
class RacingRecoverersTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash() {
            super("crash", null, false, false);
        }
    }

    @Test
    void fiveRecoverers_raceOverHundredStaleTransactions_eachFinishedExactlyOnce() throws Exception {
        String db = mongo.database();
        Bank setup = new Bank(manager(db, "setup", mongo.client(), CrashHook.NONE));
        setup.createAccount("S", 1_000L);
        setup.createAccount("D", 1_000L);
        mongo.invariants().expectTotal(db, 2_000L);

        // Given 100 transfers of 1 from S to D, each abandoned by a crash at a random point after its insert.
        List<CrashPoint> points = List.of(
                CrashPoint.after(CrashPoint.Step.INSERT, -1), CrashPoint.after(CrashPoint.Step.APPLY, 0),
                CrashPoint.after(CrashPoint.Step.APPLY, 1), CrashPoint.after(CrashPoint.Step.COMMIT, -1),
                CrashPoint.after(CrashPoint.Step.RELEASE, 0), CrashPoint.before(CrashPoint.Step.FINISH, -1));
        Random random = new Random(42);
        for (int i = 0; i < 100; i++) {
            CrashPoint point = points.get(random.nextInt(points.size()));
            Bank crashing = new Bank(manager(db, "owner", mongo.client(), (p, id) -> {
                if (p.equals(point)) {
                    throw new Crash();
                }
            }));
            assertThatThrownBy(() -> crashing.transfer("S", "D", 1L)).isInstanceOf(Crash.class);
        }
        mongo.expireLeases(db);

        // When five instances, each with its own client, recover at the same time.
        ExecutorService pool = Executors.newFixedThreadPool(5);
        List<Future<RecoveryReport>> reports = new ArrayList<>();
        for (int r = 0; r < 5; r++) {
            MongoClient client = mongo.newClient();
            TransactionManager recoverer = manager(db, "recoverer-" + r, client, CrashHook.NONE);
            reports.add(pool.submit((Callable<RecoveryReport>) () -> recoverer.recover(Duration.ZERO)));
        }
        RecoveryReport total = new RecoveryReport(0, 0, 0);
        for (Future<RecoveryReport> report : reports) {
            total = total.plus(report.get());
        }
        pool.shutdown();

        // Then each was won by exactly one of them and applied exactly once.
        assertThat(total.rolledForward()).as("finished by exactly one recoverer each: " + total).isEqualTo(100);
        assertThat(total.canceled()).isZero();
        var accounts = mongo.client().getDatabase(db).getCollection("accounts");
        assertThat(accounts.find(new Document("_id", "S")).first().getLong("balance")).isEqualTo(900L);
        assertThat(accounts.find(new Document("_id", "D")).first().getLong("balance")).isEqualTo(1_100L);
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments(new Document("epoch", 2L)))
                .as("every transaction taken over exactly once").isEqualTo(100);
    }

    static TransactionManager manager(String db, String app, MongoClient client, CrashHook hook) {
        return Bank.configure(TestManagers.builder(client, db, app).twoRoundCommit(false).finishInBackground(false).crashHook(hook)).build();
    }
}
