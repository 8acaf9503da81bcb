package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code transactions list} and the oldest open transaction of {@code status}, against a real embedded server. */
class TransactionsCommandTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        for (String id : List.of("A", "B")) {
            assertThat(cli.run("accounts", "create", id, "1000").exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), 2000);
    }

    private MongoCollection<Document> transactions() {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions");
    }

    private String run(String... args) {
        CliRunner.Result r = cli.run(args);
        assertThat(r.exitCode()).as(r.toString()).isIn(0, 3);
        return r.json().get("id").asText();
    }

    private static List<String> ids(CliRunner.Result r) {
        List<String> ids = new ArrayList<>();
        r.json().get("transactions").forEach(tx -> ids.add(tx.get("id").asText()));
        return ids;
    }

    @Test
    void list_json_hasTheContractKeys_newestFirst() throws InterruptedException {
        String done = run("transfer", "A", "B", "10", "--json");
        Thread.sleep(2);
        String canceled = run("transfer", "A", "B", "5000", "--json");
        Thread.sleep(2);
        String queued = run("submit", "B", "A", "7", "--json");

        CliRunner.Result r = cli.run("transactions", "list", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.keys()).containsExactly("transactions", "more", "next", "total", "server", "data");
        assertThat(r.json().get("more").asBoolean()).isFalse();
        assertThat(ids(r)).containsExactly(queued, canceled, done);
        JsonNode first = r.json().get("transactions").get(0);
        List<String> keys = new ArrayList<>();
        first.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("id", "state", "age", "owner", "application", "epoch", "reason", "code",
                "source", "destination", "value", "stale");
        assertThat(first.get("state").asText()).isEqualTo("initial");
        assertThat(first.get("age").isNumber()).isTrue();
        assertThat(first.get("source").asText()).isEqualTo("B");
        assertThat(first.get("value").asLong()).isEqualTo(7);
        JsonNode refused = r.json().get("transactions").get(1);
        assertThat(refused.get("state").asText()).isEqualTo("canceled");
        assertThat(refused.get("code").asText()).isEqualTo("INSUFFICIENT_FUNDS");
        assertThat(refused.get("reason").asText()).contains("A");
        assertThat(refused.get("epoch").asLong()).isEqualTo(1);
        assertThat(refused.get("owner").asText()).startsWith("mongo2pc@");

        assertThat(cli.run("cancel", queued).exitCode()).isZero();
    }

    @Test
    void list_filters_andPagesWithLimitAndAfter() {
        String done = run("transfer", "A", "B", "10", "--json");
        String canceled = run("transfer", "A", "B", "5000", "--json");
        String shop = run("--app", "shop", "transfer", "B", "A", "3", "--json");
        String queued = run("submit", "B", "A", "7", "--json");
        transactions().insertOne(new Document("_id", "old").append("state", "done").append("lastModified", new Date(0)));

        assertThat(ids(cli.run("transactions", "list", "--state", "canceled", "--state", "INITIAL", "--json")))
                .containsExactlyInAnyOrder(canceled, queued);
        assertThat(ids(cli.run("transactions", "list", "--app", "shop", "--json"))).containsExactly(shop);
        assertThat(ids(cli.run("--app", "shop", "transactions", "list", "--json"))).containsExactly(shop);
        assertThat(ids(cli.run("transactions", "list", "--older-than", "1h", "--json"))).containsExactly("old");
        String owner = cli.run("transactions", "list", "--json").json().get("transactions").get(1).get("owner").asText();
        assertThat(ids(cli.run("transactions", "list", "--owner", owner, "--json"))).containsExactly(shop);

        CliRunner.Result first = cli.run("transactions", "list", "--limit", "3", "--json");
        assertThat(first.json().get("more").asBoolean()).isTrue();
        CliRunner.Result second = cli.run("transactions", "list", "--limit", "3", "--after",
                first.json().get("next").asText(), "--json");
        assertThat(second.json().get("more").asBoolean()).isFalse();
        List<String> all = new ArrayList<>(ids(first));
        all.addAll(ids(second));
        assertThat(all).containsExactlyInAnyOrder(done, canceled, shop, queued, "old");

        assertThat(cli.run("cancel", queued).exitCode()).isZero();
    }

    @Test
    void list_human_isATableWithTheIds() {
        String done = run("transfer", "A", "B", "10", "--json");

        CliRunner.Result r = cli.run("transactions", "list");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("ID", "STATE", "AGE", "OWNER", done, "done", "A -> B 10");
        assertThat(cli.run("transactions", "list", "--state", "pending").out()).contains("no transactions");
    }

    @ParameterizedTest(name = "transactions list {0} {1}")
    @CsvSource({
            "--state, nope, unknown state 'nope'",
            "--limit, 0, limit must be between 1 and 1000, got 0",
            "--limit, 1001, got 1001",
            "--limit, many, many",
            "--older-than, -1s, '-1s' is negative",
            "--older-than, soon, 'soon' is not a duration",
            "--after, garbage, 'garbage' is not a page cursor",
            "--owner, ' ', owner must not be empty",
    })
    void list_badFilter_exit2_withAClearMessage_andNothingChanged(String option, String value, String message) {
        run("transfer", "A", "B", "10", "--json");
        long before = transactions().countDocuments();

        CliRunner.Result r = cli.run("transactions", "list", option, value, "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.keys()).containsExactly("error");
        assertThat(r.err()).contains(message).doesNotContain("Exception");
        assertThat(transactions().countDocuments()).isEqualTo(before);
    }

    @Test
    void status_namesTheOldestOpenTransaction() throws InterruptedException {
        String first = run("submit", "A", "B", "1", "--json");
        Thread.sleep(2);
        String second = run("submit", "A", "B", "2", "--json");

        CliRunner.Result json = cli.run("status", "--json");
        CliRunner.Result human = cli.run("status");

        assertThat(json.json().get("oldestOpenId").asText()).isEqualTo(first);
        assertThat(json.json().get("oldestOpenSeconds").isNumber()).isTrue();
        assertThat(human.out()).contains("oldest open transaction: " + first);
        assertThat(cli.run("cancel", first).exitCode()).isZero();
        assertThat(cli.run("status", "--json").json().get("oldestOpenId").asText()).isEqualTo(second);
        assertThat(cli.run("cancel", second).exitCode()).isZero();
    }
}
