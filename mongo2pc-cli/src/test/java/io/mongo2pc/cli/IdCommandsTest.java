package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code transfer}, {@code submit} and {@code tx} take {@code --id ID}: the same command twice with
 * one id is one transaction, and the second says it already ran, with the first one's exit code.
 */
class IdCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "0").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), 1000L);
    }

    private long balance(String id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("accounts").find(new Document("_id", id)).first()
                .getLong("balance");
    }

    private long transactions() {
        return mongo.transactions(mongo.database()).countDocuments();
    }

    @Test
    void transfer_sameIdTwice_movesTheMoneyOnce_andSaysItAlreadyRan() {
        CliRunner.Result first = cli.run("transfer", "A", "B", "100", "--id", "order-42");
        CliRunner.Result second = cli.run("transfer", "A", "B", "100", "--id", "order-42");
        CliRunner.Result third = cli.run("transfer", "A", "B", "100", "--id", "order-42", "--json");

        assertThat(first.exitCode()).as(first.toString()).isZero();
        assertThat(first.out()).startsWith("transfer order-42 done");
        assertThat(second.exitCode()).as(second.toString()).isZero();
        assertThat(second.out()).startsWith("already ran: transfer order-42 done");
        assertThat(third.json().get("id").asText()).isEqualTo("order-42");
        assertThat(third.json().get("alreadyRan").asBoolean()).isTrue();
        assertThat(balance("A")).isEqualTo(900);
        assertThat(balance("B")).isEqualTo(100);
        assertThat(transactions()).isEqualTo(1);
    }

    @Test
    void transfer_sameIdTwice_canceled_exit3Both_andSaysItAlreadyRan() {
        CliRunner.Result first = cli.run("transfer", "A", "B", "5000", "--id", "too-much");
        CliRunner.Result second = cli.run("transfer", "A", "B", "5000", "--id", "too-much", "--json");

        assertThat(first.exitCode()).as(first.toString()).isEqualTo(3);
        assertThat(second.exitCode()).as(second.toString()).isEqualTo(3);
        assertThat(second.json().get("state").asText()).isEqualTo("canceled");
        assertThat(second.json().get("alreadyRan").asBoolean()).isTrue();
        assertThat(second.err()).contains("already ran: transfer too-much");
        assertThat(transactions()).isEqualTo(1);
    }

    @Test
    void transfer_sameIdOtherAmount_isRefused_exit2_nothingMoves() {
        assertThat(cli.run("transfer", "A", "B", "100", "--id", "t-1").exitCode()).isZero();

        CliRunner.Result other = cli.run("transfer", "A", "B", "200", "--id", "t-1");

        assertThat(other.exitCode()).as(other.toString()).isEqualTo(2);
        assertThat(balance("A")).isEqualTo(900);
    }

    @Test
    void submit_sameIdTwice_queuesOnce_andSaysItWasAlreadySubmitted() {
        CliRunner.Result first = cli.run("submit", "A", "B", "10", "--id", "q-1");
        CliRunner.Result second = cli.run("submit", "A", "B", "10", "--id", "q-1");
        CliRunner.Result third = cli.run("submit", "A", "B", "10", "--id", "q-1", "--json");

        assertThat(first.exitCode()).isZero();
        assertThat(first.out().trim()).isEqualTo("q-1");
        assertThat(second.exitCode()).isZero();
        assertThat(second.out().trim()).as("stdout stays the id").isEqualTo("q-1");
        assertThat(second.err()).contains("already submitted: transaction q-1 is initial");
        assertThat(third.json().get("alreadySubmitted").asBoolean()).isTrue();
        assertThat(third.json().get("state").asText()).isEqualTo("initial");
        assertThat(transactions()).isEqualTo(1);
        assertThat(cli.run("worker", "--drain").exitCode()).isZero();
        assertThat(balance("B")).isEqualTo(10);
    }

    @Test
    void tx_sameIdTwice_runsOnce_andSaysItAlreadyRan() throws IOException {
        Path file = Files.createTempFile("tx", ".json");
        Files.writeString(file, "{\"ops\": [{\"op\": \"inc\", \"db\": \"" + mongo.database() + "\", \"coll\": \"accounts\", "
                + "\"id\": \"A\", \"inc\": {\"balance\": -30}, \"guard\": {\"balance\": {\"$gte\": 30}}}, "
                + "{\"op\": \"inc\", \"db\": \"" + mongo.database() + "\", \"coll\": \"accounts\", \"id\": \"B\", \"inc\": {\"balance\": 30}}]}");
        try {
            CliRunner.Result first = cli.run("tx", file.toString(), "--id", "pay-1", "--json");
            CliRunner.Result second = cli.run("tx", file.toString(), "--id", "pay-1");

            assertThat(first.exitCode()).as(first.toString()).isZero();
            assertThat(first.json().get("id").asText()).isEqualTo("pay-1");
            assertThat(first.json().get("alreadyRan").asBoolean()).isFalse();
            assertThat(second.exitCode()).as(second.toString()).isZero();
            assertThat(second.out()).startsWith("already ran: transaction pay-1 done");
            assertThat(balance("A")).isEqualTo(970);
            assertThat(transactions()).isEqualTo(1);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
