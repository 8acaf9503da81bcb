package io.mongo2pc.regression;

import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TwoAccounts;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Date;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Recovery waited for no reason: after a crash of an owner with a 3 s lease, {@code recover()} of a
 * manager with the default 30 s lease left the transaction for 30 s (it judged it by its own lease,
 * not the owner's), while readers and {@code verify} waited on it. {@code recover()} now takes a
 * transaction over as soon as its owner's lease (stored in it) has run out by the server's clock;
 * a transaction without a lease of its own (written by hand after the tutorial) still waits for
 * this manager's lease.
 */
class RecoveryWaitTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash() {
            super("the owner's process ends after the commit point");
        }
    }

    @Test
    void recover_ownersLeaseRanOut_takesItOverAtOnce_notAfterThisManagersLongerLease() throws Exception {
        // given an owner with a 1 s lease that died after its commit point
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        TransactionManager owner = TestManagers.crashing(mongo.client(), mongo.database(), "owner", (point, tx) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new Crash();
            }
        }).finishInBackground(false).lease(Duration.ofSeconds(1)).build();
        assertThatThrownBy(() -> owner.run(two.transfer(30))).isInstanceOf(Crash.class);
        TransactionManager recoverer = TestManagers.builder(mongo.newClient(), mongo.database(), "recoverer")
                .lease(Duration.ofSeconds(30)).build();

        // when this manager (lease 30 s) recovers with its default, a few seconds later
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        RecoveryReport report = recoverer.recover();
        while (report.rolledForward() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            report = recoverer.recover();
        }

        // then the transfer was finished once the owner's own lease ran out
        assertThat(report.rolledForward()).as("rolled forward long before this manager's 30 s lease").isEqualTo(1);
        assertThat(two.settledBalances()).containsExactly(70L, 30L);
    }

    @Test
    void recover_transactionWithoutALeaseOfItsOwn_waitsForThisManagersLease() {
        // given a tutorial transaction written by hand (no owner, no lease), changed just now
        mongo.client().getDatabase(mongo.database()).getCollection("accounts").insertOne(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", java.util.List.of()));
        mongo.client().getDatabase(mongo.database()).getCollection("accounts").insertOne(
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", java.util.List.of()));
        mongo.transactions(mongo.database()).insertOne(new Document("_id", 1).append("source", "A").append("destination", "B")
                .append("value", 10L).append("state", "pending").append("lastModified", new Date()));
        TransactionManager recoverer = TestManagers.builder(mongo.client(), mongo.database(), "recoverer")
                .lease(Duration.ofSeconds(30)).build();

        // when recovery runs with its default
        RecoveryReport report = recoverer.recover();

        // then it leaves the transaction: its application may still be running it
        assertThat(report.finished()).isZero();
        assertThat(report.notStale()).hasSize(1);
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", 1)).first().getString("state"))
                .isEqualTo(TransactionState.PENDING.stored());
        mongo.transactions(mongo.database()).deleteOne(new Document("_id", 1)); // no outcome to check: nothing ran
    }
}
