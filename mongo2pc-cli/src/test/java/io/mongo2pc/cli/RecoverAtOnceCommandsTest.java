package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * After a kill -9 of a process with a short lease, {@code recover} finishes its transactions as soon
 * as that lease has run out (not after this command's 30 s {@code --lease}), every marker
 * {@code status} counts can be listed (which account, which transaction), and {@code recover} says
 * what became of each.
 */
class RecoverAtOnceCommandsTest {
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

    /**
     * A transfer of 100 from A to B whose owner (lease {@code lease}) died just after its commit
     * point ({@code commit}: applied, markers on A and B) or after its debit (pending); returns its id.
     */
    private String crashed(Duration lease, boolean commit) {
        CrashPoint at = commit ? CrashPoint.after(CrashPoint.Step.COMMIT, -1) : CrashPoint.after(CrashPoint.Step.APPLY, 0);
        TransactionManager owner = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "killed")
                .lease(lease).finishInBackground(false).commitInsert(commit).crashHook((point, id) -> {
                    if (point.equals(at)) {
                        throw new IllegalStateException(String.valueOf(id));
                    }
                })).build();
        String[] id = new String[1];
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).satisfies(e -> id[0] = e.getMessage());
        return id[0];
    }

    @Test
    void recover_ownersShortLeaseRanOut_finishesItAtOnce_notAfterThisCommandsLease() throws InterruptedException {
        // given an applied transfer whose owner (lease 3 s) was killed
        String id = crashed(Duration.ofSeconds(3), true);

        // when recover runs with its defaults (--lease 30s), for at most 20 s
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        CliRunner.Result r = cli.run("recover", "--json");
        while (r.json().get("rolledForward").asInt() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            r = cli.run("recover", "--json");
        }

        // then it finished the transfer once the owner's own lease had run out
        assertThat(r.json().get("rolledForward").asInt()).as(r.toString()).isEqualTo(1);
        assertThat(cli.run("inspect", id, "--json").json().get("state").asText()).isEqualTo("done");
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
    }

    @Test
    void statusMarkers_listsEveryMarkerItCounts_andRecoverSaysWhatBecameOfEach() {
        // given the markers of a committed transfer whose owner was killed
        String id = crashed(Duration.ofSeconds(30), true);

        // when status lists its markers
        CliRunner.Result status = cli.run("status", "--markers", "--json");
        CliRunner.Result statusText = cli.run("status", "--markers");

        // then each marker it counts is listed with its account and transaction
        assertThat(status.exitCode()).as(status.toString()).isZero();
        JsonNode listed = status.json().get("markerList");
        assertThat(listed).hasSize(status.json().get("markers").asInt()).hasSize(2);
        assertThat(accounts(listed)).containsExactly("A", "B");
        for (JsonNode marker : listed) {
            assertThat(marker.get("transaction").asText()).isEqualTo(id);
            assertThat(marker.get("state").asText()).isEqualTo("applied");
        }
        assertThat(statusText.out()).contains("account A: transaction " + id + ", applied", "account B: transaction " + id + ", applied");

        // when recover runs (the owner's lease still runs: a committed transaction's markers are released all the same)
        CliRunner.Result r = cli.run("recover");

        // then it says what became of each marker
        assertThat(r.out()).as(r.toString()).contains("markers on accounts: 2 before the pass, 0 after it",
                "marker of transaction " + id + " on account A: released (transaction applied)",
                "marker of transaction " + id + " on account B: released (transaction applied)");
        assertThat(cli.run("status", "--markers", "--json").json().get("markerList")).isEmpty();
        mongo.skipInvariants("the transaction stays applied until its owner's lease of 30s runs out");
    }

    @Test
    void recoverJson_listsEachMarkerBeforeThePass_withItsTransactionsStateAfterIt_andWhyOnesAreLeft() {
        // given a transfer committed and one pending, both of killed owners with a lease of 30 s
        String committed = crashed(Duration.ofSeconds(30), true);
        String pending = crashed(Duration.ofSeconds(30), false);

        // when recover runs
        CliRunner.Result r = cli.run("recover", "--json");
        CliRunner.Result text = cli.run("recover");

        // then every marker is listed: the committed one's released, the pending one's left, and why
        JsonNode markers = r.json().get("markerList");
        assertThat(markers).hasSize(4);
        for (JsonNode marker : markers) {
            boolean isCommitted = marker.get("transaction").asText().equals(committed);
            assertThat(marker.get("state").asText()).isEqualTo(isCommitted ? "applied" : "pending");
            assertThat(marker.get("removed").asBoolean()).isEqualTo(isCommitted);
        }
        assertThat(text.out()).contains("marker of transaction " + pending + " on account A: left: transaction pending, "
                + "its owner's lease runs until ");
        mongo.skipInvariants("both transactions stay open until their owners' lease of 30s runs out");
    }

    private static List<String> accounts(JsonNode markers) {
        List<String> accounts = new ArrayList<>();
        markers.forEach(m -> accounts.add(m.get("account").asText()));
        return accounts;
    }
}
