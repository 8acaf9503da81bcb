package io.mongo2pc.cli;

import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.sweeps.Orphans;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code recover} and {@code worker --drain} say why they left what they left: the owner's own
 * lease (not this process's --lease) and when it runs out, what --older-than kept out, what is queued.
 */
@Tag("slow")
class WhyNothingHappenedTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "1000").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    /** A transfer whose owner, with a lease of {@code lease}, stopped after its debit. */
    private void crashedTransfer(Duration lease) {
        TransactionManager owner = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "crashed")
                .lease(lease).commitInsert(false) // a pending document: an open transaction whose lease runs
                .crashHook((point, id) -> {
                    if (point.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0))) {
                        throw new IllegalStateException("crash");
                    }
                })).build();
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).hasMessage("crash");
    }

    @Test
    void recover_saysWhatItLeftAndWhy() {
        crashedTransfer(Duration.ofMinutes(1));
        assertThat(cli.run("submit", "A", "B", "5").exitCode()).isZero();

        CliRunner.Result now = cli.run("recover", "--older-than", "0s");
        CliRunner.Result json = cli.run("recover", "--older-than", "0s", "--json");
        CliRunner.Result byDefault = cli.run("recover");

        assertThat(now.out()).contains("1 not stale yet: its owner's lease of 1m runs out at ")
                .contains("1 queued (initial): nobody started them; `mongo2pc worker` runs them");
        assertThat(json.json().get("notStale").asInt()).isEqualTo(1);
        assertThat(json.json().get("notStaleUntil").asText()).isNotBlank();
        assertThat(json.json().get("queued").asInt()).isEqualTo(1);
        assertThat(json.json().get("recent").asInt()).isZero();
        assertThat(byDefault.out()).as("by default every open transaction is looked at")
                .contains("1 not stale yet: its owner's lease of 1m runs out at ").doesNotContain("not looked at");
        mongo.skipInvariants("the crashed transfer and the queued one stay open on purpose");
    }

    @Test
    void workerDrain_namesTheOwnersLease_notItsOwn() throws InterruptedException {
        crashedTransfer(Duration.ofSeconds(8));

        CliRunner.Running worker = cli.start("--lease", "30s", "worker", "--drain");
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!worker.out().toString().contains("waiting for 1 open") && !worker.exit().isDone() && System.nanoTime() < giveUp) {
            Thread.sleep(20);
        }
        mongo.expireLeases(mongo.database()); // once the worker said what it waits for, the owner's lease runs out
        CliRunner.Result r = worker.join();

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("waiting for 1 open transaction(s): 1 not stale yet: its owner's lease of 8s runs out at")
                .doesNotContain("lease of 30s runs out").contains("worker drained");
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
    }

    /**
     * A transfer whose process died after its prepares, before its commit insert: no document, so
     * nothing for recovery to take over, and {@code verify} sees the hold; once the owner's deadline
     * has passed, {@code recover}'s sweep gives the debit back behind a tombstone and counts it canceled.
     */
    @Test
    void recover_cancelsATransferWhoseOwnerDiedBeforeItsCommitInsert_onceItsDeadlinePassed() {
        Duration lease = Duration.ofSeconds(2);
        TransactionManager owner = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "crashed")
                .lease(lease).crashHook((point, id) -> {
                    if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                        throw new IllegalStateException(String.valueOf(id));
                    }
                })).build();
        String id = null;
        try {
            new Bank(owner).transfer("A", "B", 100L);
        } catch (IllegalStateException e) {
            id = e.getMessage();
        }
        assertThat(id).as("the owner stopped before its commit insert").isNotNull();
        assertThat(cli.run("inspect", id).exitCode()).as("no document before the commit insert: not found").isEqualTo(4);
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).as("the debit's hold").isEqualTo(1);

        // The owner is dead: its prepares' deadline is moved past, with recover's clock skew (1 s at --lease 2s).
        Orphans.expire(mongo.client().getDatabase(mongo.database()), Duration.ofSeconds(1));
        CliRunner.Result r = cli.run("--lease", "2s", "recover", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("canceled").asInt()).as(r.toString()).isEqualTo(1);
        assertThat(r.json().get("rolledForward").asInt()).isZero();
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
        CliRunner.Result inspect = cli.run("inspect", id, "--json");
        assertThat(inspect.json().get("state").asText()).as(inspect.toString()).isEqualTo("canceled");
        assertThat(inspect.json().get("code").asText()).isEqualTo("TIMED_OUT");
    }
}
