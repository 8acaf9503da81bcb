package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator reads in the console's API: the charts' history from the transactions
 * collection (so a console started later shows what happened before it), the list's total, time
 * range and search by document, the warnings, and who did each action.
 */
@Tag("slow")
class ConsoleOperatorApiTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;
    ConsoleFixture console;

    @BeforeEach
    void setUp() {
        cli = new CliRunner(globals().toArray(String[]::new));
        for (String id : List.of("A", "B", "C")) {
            assertThat(cli.run("accounts", "create", id, "1000").exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), 3000);
    }

    @AfterEach
    void stopConsole() {
        if (console != null) {
            console.close();
        }
    }

    private List<String> globals() {
        return List.of("--uri", mongo.uri(), "--db", mongo.database());
    }

    private ConsoleFixture console(String... args) {
        console = new ConsoleFixture(globals(), args);
        return console;
    }

    private String transfer(String from, String to, String amount) {
        CliRunner.Result r = cli.run("transfer", from, to, amount, "--json");
        assertThat(r.exitCode()).as(r.toString()).isIn(0, 3);
        return r.json().get("id").asText();
    }

    private static List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.get("transactions").forEach(tx -> ids.add(tx.get("id").asText()));
        return ids;
    }

    /** Asks {@code path} until its answer satisfies {@code wanted} (the console reads the database once per refresh). */
    private JsonNode until(String path, Predicate<JsonNode> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            ConsoleFixture.Reply r = console.get(path);
            if (r.status() == 200 && wanted.test(last = r.json())) {
                return last;
            }
            ConsoleFixture.pause(100);
        }
        throw new AssertionError(path + " never answered as wanted; last: " + last);
    }

    private static long sum(JsonNode metrics, String key) {
        long sum = 0;
        for (JsonNode p : metrics.get("points")) {
            sum += p.get(key).asLong();
        }
        return sum;
    }

    @Test
    void metrics_ofAConsoleStartedAfterTheTransactions_showThemFromTheCollection_withTheirLatency() {
        for (int i = 0; i < 5; i++) {
            transfer("A", "B", "1");
        }
        transfer("A", "B", "5000"); // canceled: insufficient funds

        console();
        JsonNode hour = until("/api/metrics", m -> sum(m, "committed") == 5 && sum(m, "canceled") == 1);
        JsonNode day = until("/api/metrics?window=day", m -> sum(m, "committed") == 5);

        assertThat(hour.get("window").asText()).isEqualTo("hour");
        assertThat(hour.get("points")).hasSize(360);
        assertThat(day.get("points")).hasSize(288);
        assertThat(day.get("bucketSeconds").asInt()).isEqualTo(300);
        boolean timed = false;
        for (JsonNode p : hour.get("points")) {
            timed |= p.get("committed").asLong() > 0 && p.get("latencyP50Ms").isNumber() && p.get("latencyMaxMs").asLong() >= 0;
        }
        assertThat(timed).as("a bucket with commits has their latency").isTrue();
        assertThat(console.get("/api/metrics?window=week").status()).isEqualTo(400);
    }

    @Test
    void metrics_countInteractiveTransactions_andTheAttemptsTheirBodiesTook() {
        try (TransactionManager tm = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "bodies")).build()) {
            DocumentRef a = DocumentRef.of(mongo.database(), "accounts", "A");
            TransactionResult<Long> once = tm.transact(ctx -> {
                long balance = ((Number) ctx.get(a).orElseThrow().get("balance")).longValue();
                ctx.update(a, new Document("$set", new Document("note", "once")));
                return balance;
            });
            TransactionResult<Long> twice = tm.transact(ctx -> {
                long balance = ((Number) ctx.get(a).orElseThrow().get("balance")).longValue();
                if (ctx.attempt() == 1) {
                    transfer("A", "B", "1"); // commits between this body's read and its write: a conflict
                }
                ctx.update(a, new Document("$set", new Document("note", "twice")));
                return balance;
            });
            assertThat(once.attempts()).isEqualTo(1);
            assertThat(twice.attempts()).isEqualTo(2);
        }

        console();
        JsonNode hour = until("/api/metrics", m -> m.get("interactive").get("committed").asLong() == 2);

        assertThat(hour.get("interactive").get("attemptsPerTransaction").asDouble()).isEqualTo(1.5);
        assertThat(hour.get("interactive").get("attemptsMax").asLong()).isEqualTo(2);
        assertThat(sum(hour, "committed")).isEqualTo(3); // the transfer too
    }

    @Test
    void transactions_haveATotal_aTimeRange_andASearchByDocument() {
        transfer("A", "B", "1");
        transfer("A", "B", "2");
        String c1 = transfer("C", "A", "3");
        String c2 = transfer("B", "C", "4");
        console();

        JsonNode all = console.get("/api/transactions?limit=2").json();
        JsonNode touchingC = console.get("/api/transactions?doc=C").json();
        JsonNode future = console.get("/api/transactions?from=2999-01-01T00:00:00Z").json();
        JsonNode lastHour = console.get("/api/transactions?from=1h&to=2999-01-01T00:00:00Z").json();

        assertThat(all.get("total").asLong()).isEqualTo(4);
        assertThat(ids(all)).hasSize(2);
        assertThat(ids(touchingC)).containsExactlyInAnyOrder(c1, c2);
        assertThat(touchingC.get("total").asLong()).isEqualTo(2);
        assertThat(ids(future)).isEmpty();
        assertThat(future.get("total").asLong()).isZero();
        assertThat(lastHour.get("total").asLong()).isEqualTo(4);
        assertThat(console.get("/api/transactions?from=soon").status()).isEqualTo(400);
        assertThat(console.get("/api/transactions?from=1h&to=2h").status()).isEqualTo(400); // ends before it starts
        CliRunner.Result list = cli.run("transactions", "list", "--touching", "C", "--from", "1h", "--json");
        assertThat(list.json().get("total").asLong()).isEqualTo(2);
    }

    @Test
    void warnings_nameQueuedTransactionsNoWorkerClaims_staleOnes_andMarkersOfNoOpenTransaction() {
        String queued = cli.run("submit", "A", "B", "5").out().trim();
        String stuck = ConsoleFixture.stuckTransfer(mongo, Duration.ofSeconds(1));
        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .updateOne(new Document("_id", "C"), new Document("$push", new Document("pendingTransactions", "ghost")));
        console = new ConsoleFixture(List.of("--uri", mongo.uri(), "--db", mongo.database(), "--lease", "1s"));

        JsonNode warnings = until("/api/warnings", w -> w.get("warnings").size() == 3);

        JsonNode queuedWarning = warnings.get("warnings").get(0);
        assertThat(queuedWarning.get("kind").asText()).isEqualTo("queued");
        assertThat(queuedWarning.get("message").asText()).contains("1 queued transaction has waited more than 1s");
        assertThat(queuedWarning.get("ids").get(0).asText()).isEqualTo(queued);
        assertThat(warnings.get("warnings").get(1).get("kind").asText()).isEqualTo("stale");
        assertThat(warnings.get("warnings").get(1).get("ids").get(0).asText()).isEqualTo(stuck);
        assertThat(warnings.get("warnings").get(2).get("message").asText()).contains("C carries ghost (no such transaction)");

        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .updateOne(new Document("_id", "C"), new Document("$pull", new Document("pendingTransactions", "ghost")));
        assertThat(cli.run("cancel", queued).exitCode()).isZero();
        assertThat(cli.run("recover", "--older-than", "0s").exitCode()).isZero();
        until("/api/warnings", w -> w.get("warnings").isEmpty());
    }

    @Test
    void cancel_recordsWhoDidIt_theOsUserOnLocalhost() {
        String queued = cli.run("submit", "A", "B", "5").out().trim();
        console();

        assertThat(console.post("/api/transactions/" + queued + "/cancel").status()).isEqualTo(200);

        JsonNode tx = console.get("/api/transactions/" + queued).json();
        assertThat(tx.get("actions")).hasSize(1);
        assertThat(tx.get("actions").get(0).get("action").asText()).isEqualTo("cancel");
        assertThat(tx.get("actions").get(0).get("by").asText()).isEqualTo(System.getProperty("user.name"));
        assertThat(tx.get("reason").asText()).isEqualTo("canceled in the console by " + System.getProperty("user.name"));
        Document stored = mongo.client().getDatabase(mongo.database()).getCollection("transactions").find().first();
        assertThat(stored.getList("actions", Document.class).get(0)).containsEntry("by", System.getProperty("user.name"));
    }

    @Test
    void actions_recordTheNameOfTheTokenThatDidThem(@TempDir Path dir) throws IOException {
        String queued = cli.run("submit", "A", "B", "5").out().trim();
        String stuck = ConsoleFixture.stuckTransfer(mongo, Duration.ofMinutes(5));
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "alice alice-secret-0123456789\nbob bob-secret-0123456789abc\n");
        console("--token-file", tokens.toString());

        assertThat(console.withToken("bob-secret-0123456789abc").post("/api/transactions/" + queued + "/cancel").status()).isEqualTo(200);
        mongo.expireLeases(mongo.database());
        assertThat(console.withToken("alice-secret-0123456789").post("/api/recover").status()).isEqualTo(200);

        assertThat(console.get("/api/transactions/" + queued).json().get("actions").get(0).get("by").asText()).isEqualTo("bob");
        JsonNode recovered = console.get("/api/transactions/" + stuck).json();
        assertThat(recovered.get("state").asText()).isEqualTo("done");
        assertThat(recovered.get("actions").get(0).get("action").asText()).isEqualTo("recover");
        assertThat(recovered.get("actions").get(0).get("by").asText()).isEqualTo("alice");
        assertThat(console.withToken("carol-secret-0123456789").get("/api/status").status()).isEqualTo(401);
    }
}
