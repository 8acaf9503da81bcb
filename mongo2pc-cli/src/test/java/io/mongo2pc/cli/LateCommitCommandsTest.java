package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CLI and the console on a two-round transfer A -> B of 10 whose commit was written after its
 * deadline (stored {@code applied}, {@code insertedAt >= until}): shown and counted canceled,
 * {@code TIMED_OUT}, with {@code "lateCommit": true}; a cancel says it is canceled already and undoes it.
 */
class LateCommitCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void lateTransfer() {
        String db = mongo.database();
        cli = new CliRunner("--uri", mongo.uri(), "--db", db);
        assertThat(cli.run("accounts", "create", "A", "100").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "0").exitCode()).isZero();
        mongo.invariants().expectTotal(db, 100L);
        LateCommits.crashAtTheCommit(mongo.client(), db, "t-1", DocumentRef.of(db, "accounts", "A"),
                DocumentRef.of(db, "accounts", "B"), 10, Duration.ofMinutes(1), true);
        LateCommits.rewriteLate(mongo.client(), db, "t-1");
    }

    @Test
    void status_inspect_andList_showItCanceled() {
        JsonNode status = cli.run("status", "--json").json();
        JsonNode inspect = cli.run("inspect", "t-1", "--json").json();
        JsonNode row = cli.run("transactions", "list", "--json").json().get("transactions").get(0);
        JsonNode canceled = cli.run("transactions", "list", "--state", "canceled", "--json").json().get("transactions");
        JsonNode applied = cli.run("transactions", "list", "--state", "applied", "--json").json().get("transactions");

        assertThat(status.get("applied").asInt()).as("status applied").isZero();
        assertThat(status.get("canceled").asInt()).as("status canceled").isEqualTo(1);
        assertThat(status.get("oldestOpenId").isNull()).as("oldest open: " + status.get("oldestOpenId")).isTrue();
        assertThat(inspect.get("state").asText()).as("inspect").isEqualTo("canceled");
        assertThat(inspect.get("code").asText()).isEqualTo("TIMED_OUT");
        assertThat(inspect.get("lateCommit").asBoolean()).isTrue();
        assertThat(inspect.get("storedState").asText()).isEqualTo("applied");
        assertThat(row.get("state").asText()).as("list").isEqualTo("canceled");
        assertThat(row.get("code").asText()).isEqualTo("TIMED_OUT");
        assertThat(row.get("lateCommit").asBoolean()).isTrue();
        assertThat(canceled).as("listed canceled").hasSize(1);
        assertThat(applied).as("listed applied").isEmpty();
        finish();
    }

    @Test
    void console_showsItCanceled() {
        try (ConsoleFixture console = new ConsoleFixture(List.of("--uri", mongo.uri(), "--db", mongo.database()))) {
            JsonNode tx = console.get("/api/transactions/t-1").json();
            JsonNode status = console.get("/api/status").json();

            assertThat(tx.get("state").asText()).isEqualTo("canceled");
            assertThat(tx.get("lateCommit").asBoolean()).isTrue();
            assertThat(tx.get("canCancel").asBoolean()).isFalse();
            assertThat(status.get("canceled").asInt()).isEqualTo(1);
            assertThat(status.get("applied").asInt()).isZero();
        }
        finish();
    }

    @Test
    void cancel_saysItWasCanceledAlready_andUndoesIt() {
        CliRunner.Result r = cli.run("cancel", "t-1", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("alreadyCanceled").asBoolean()).isTrue();
        assertThat(r.json().get("state").asText()).isEqualTo("canceled");
        assertThat(r.json().get("code").asText()).isEqualTo("TIMED_OUT");
        assertThat(List.of(balance("A"), balance("B"))).containsExactly(100L, 0L);
        assertThat(stored().getString("state")).isEqualTo("canceled");
    }

    /** Recovery repairs and undoes what is left: the balances as before the transfer. */
    private void finish() {
        mongo.expireLeases(mongo.database());
        CliRunner.Result r = cli.run("recover", "--json");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("rolledForward").asInt()).as(r.toString()).isZero();
        assertThat(List.of(balance("A"), balance("B"))).containsExactly(100L, 0L);
        assertThat(stored().getString("state")).isEqualTo("canceled");
    }

    private Document stored() {
        return mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
    }

    private long balance(String id) {
        Document account = mongo.client().getDatabase(mongo.database()).getCollection("accounts").find(new Document("_id", id)).first();
        return ((Number) account.get("balance")).longValue();
    }
}
