package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.embedded.EmbeddedServer;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.Iterator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The console's JSON API, asked by a real HTTP client of a real console on the embedded server. */
@Tag("slow")
class ConsoleApiTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;
    ConsoleFixture console;

    @BeforeEach
    void setUp() {
        cli = new CliRunner(globals().toArray(String[]::new));
        for (String id : List.of("A", "B")) {
            assertThat(cli.run("accounts", "create", id, "1000").exitCode()).isZero();
        }
        mongo.invariants().expectTotal(mongo.database(), 2000);
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

    private String transfer(String amount) {
        CliRunner.Result r = cli.run("transfer", "A", "B", amount, "--json");
        return r.json().get("id").asText();
    }

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    private static List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.get("transactions").forEach(tx -> ids.add(tx.get("id").asText()));
        return ids;
    }

    private static void assertError(ConsoleFixture.Reply r, int status, String code) {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(keys(r.json())).containsExactly("error", "code");
        assertThat(r.json().get("code").asText()).isEqualTo(code);
        assertThat(r.json().get("error").asText()).isNotBlank().doesNotContain("Exception");
    }

    @Test
    void status_hasTheKeysOfStatusJson() {
        String queued = cli.run("submit", "A", "B", "5").out().trim();
        console();

        JsonNode status = console.status();

        assertThat(keys(status)).containsExactlyElementsOf(withoutWhere(cli.run("status", "--json").keys()));
        assertThat(status.get("initial").asInt()).isEqualTo(1);
        assertThat(status.get("oldestOpenId").asText()).isEqualTo(queued);
        assertThat(cli.run("cancel", queued).exitCode()).isZero();
    }

    @Test
    void transactions_filtersAndPages_withTheKeysOfTransactionsList() {
        String done = transfer("10");
        String canceled = transfer("5000");
        String other = transfer("20");
        console();

        JsonNode all = console.get("/api/transactions").json();
        assertThat(keys(all)).containsExactlyElementsOf(withoutWhere(cli.run("transactions", "list", "--json").keys()));
        assertThat(keys(all.get("transactions").get(0)))
                .containsExactlyElementsOf(keys(cli.run("transactions", "list", "--json").json().get("transactions").get(0)));
        assertThat(ids(all)).containsExactly(other, canceled, done);
        assertThat(ids(console.get("/api/transactions?state=canceled").json())).containsExactly(canceled);
        assertThat(ids(console.get("/api/transactions?state=canceled&state=done").json())).hasSize(3);
        assertThat(ids(console.get("/api/transactions?id=" + done).json())).containsExactly(done);
        assertThat(ids(console.get("/api/transactions?olderThan=1h").json())).isEmpty();
        assertThat(ids(console.get("/api/transactions?app=mongo2pc").json())).hasSize(3);
        JsonNode first = console.get("/api/transactions?limit=2").json();
        assertThat(first.get("more").asBoolean()).isTrue();
        JsonNode second = console.get("/api/transactions?limit=2&after=" + first.get("next").asText()).json();
        assertThat(ids(second)).containsExactly(done);

        assertError(console.get("/api/transactions?state=nope"), 400, "BAD_REQUEST");
        assertError(console.get("/api/transactions?limit=0"), 400, "BAD_REQUEST");
        assertError(console.get("/api/transactions?limit=x"), 400, "BAD_REQUEST");
        assertError(console.get("/api/transactions?olderThan=soon"), 400, "BAD_REQUEST");
        assertError(console.get("/api/transactions?after=garbage"), 400, "BAD_REQUEST");
        assertError(console.get("/api/transactions/nope"), 404, "NOT_FOUND");
        assertError(console.get("/api/nothing"), 404, "NOT_FOUND");
    }

    @Test
    void transaction_showsOperationsParticipantsMarkersAndStaleness_thenCancelUndoesIt() {
        String id = ConsoleFixture.stuckTransfer(mongo, Duration.ofMinutes(5));
        console();

        JsonNode tx = console.get("/api/transactions/" + id).json();
        assertThat(tx.get("state").asText()).isEqualTo("pending");
        assertThat(tx.get("owner").asText()).startsWith("dying@");
        assertThat(tx.get("lease").asDouble()).isEqualTo(300.0);
        assertThat(tx.get("stale").asBoolean()).isFalse();
        assertThat(tx.get("canCancel").asBoolean()).isTrue();
        assertThat(tx.get("operations")).hasSize(2);
        JsonNode debit = tx.get("operations").get(0);
        assertThat(debit.get("op").asText()).isEqualTo("increment");
        assertThat(debit.get("docId").asText()).isEqualTo("A");
        assertThat(debit.get("participant").get("marker").asBoolean()).isTrue();
        assertThat(debit.get("participant").get("document").get("balance").asLong()).isEqualTo(900);
        assertThat(tx.get("document").get("_id").asText()).isEqualTo(id);
        assertThat(tx.get("history").get(0).get("state").asText()).isEqualTo("pending");
        assertError(console.post("/api/transactions/" + id + "/cancel"), 409, "OWNER_ALIVE");
        assertThat(ids(console.get("/api/transactions?state=pending").json())).containsExactly(id);
        JsonNode owner = console.get("/api/owners").json().get("owners").get(0);
        assertThat(owner.get("owner").asText()).startsWith("dying@");
        assertThat(owner.get("transactions").get(0).asText()).isEqualTo(id);
        assertThat(owner.get("stale").asBoolean()).isFalse();

        mongo.expireLeases(mongo.database()); // the owner is dead: its lease runs out
        assertThat(console.get("/api/transactions/" + id).json().get("stale").asBoolean()).isTrue();
        assertThat(console.get("/api/owners").json().get("owners").get(0).get("stale").asBoolean()).isTrue();
        ConsoleFixture.Reply canceled = console.post("/api/transactions/" + id + "/cancel?reason=" + URLEncoder.encode("wrong payee", StandardCharsets.UTF_8));

        assertThat(canceled.status()).as(canceled.body()).isEqualTo(200);
        assertThat(keys(canceled.json())).containsExactly("id", "state", "reason", "code", "alreadyCanceled");
        assertThat(canceled.json().get("code").asText()).isEqualTo("CANCELED_BY_OPERATOR");
        assertThat(canceled.json().get("reason").asText()).isEqualTo("wrong payee");
        JsonNode after = console.get("/api/transactions/" + id).json();
        assertThat(after.get("state").asText()).isEqualTo("canceled");
        assertThat(after.get("operations").get(0).get("participant").get("marker").asBoolean()).isFalse();
        assertThat(after.get("operations").get(0).get("participant").get("document").get("balance").asLong()).isEqualTo(1000);
        assertThat(console.post("/api/transactions/" + id + "/cancel").json().get("alreadyCanceled").asBoolean()).isTrue();
    }

    @Test
    void cancel_pastTheCommitPoint_is409_unknown_is404() {
        String done = transfer("10");
        console();

        assertError(console.post("/api/transactions/" + done + "/cancel"), 409, "PAST_COMMIT_POINT");
        assertError(console.post("/api/transactions/6b04e6a2d3e56c99d83732d5/cancel"), 404, "NOT_FOUND");
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
    }

    @Test
    void recover_finishesAStaleTransaction_andPruneNeedsItsAge() {
        ConsoleFixture.stuckTransfer(mongo, Duration.ofMinutes(5));
        transfer("1");
        console();
        mongo.expireLeases(mongo.database());

        ConsoleFixture.Reply recovered = console.post("/api/recover");

        assertThat(recovered.status()).as(recovered.body()).isEqualTo(200);
        assertThat(keys(recovered.json())).containsExactlyElementsOf(withoutWhere(cli.run("recover", "--json").keys()));
        assertThat(recovered.json().get("rolledForward").asInt()).isEqualTo(1);
        assertError(console.post("/api/prune"), 400, "BAD_REQUEST");
        assertError(console.post("/api/prune?olderThan=-1s"), 400, "BAD_REQUEST");
        assertThat(console.post("/api/prune?olderThan=1h").json().get("deleted").asInt()).isZero();
        ConsoleFixture.Reply young = console.post("/api/prune?olderThan=0s");
        assertError(young, 400, "BAD_REQUEST");
        assertThat(young.body()).contains("31s");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions")
                .countDocuments(new Document("pruned", new Document("$exists", true)))).as("nothing pruned").isZero();
        mongo.invariants().expectTotal(mongo.database(), 2000);
    }

    @Test
    void prune_getCountsWhatAPruneWouldDo_withoutWriting_thenPostPrunesThatMany() {
        transfer("1");
        assertThat(cli.run("transfer", "A", "B", "5000").exitCode()).as("refused: insufficient funds").isEqualTo(3);
        MongoCollection<Document> transactions = mongo.client().getDatabase(mongo.database()).getCollection("transactions");
        // an hour passes for both
        transactions.updateMany(new Document(), new Document("$set",
                new Document("lastModified", Date.from(Instant.now().minus(Duration.ofHours(1))))));
        console();
        Document stub = new Document("pruned", new Document("$exists", true));

        ConsoleFixture.Reply would = console.get("/api/prune?olderThan=30m");

        assertThat(would.status()).as(would.body()).isEqualTo(200);
        assertThat(would.json().get("dryRun").asBoolean()).isTrue();
        assertThat(would.json().get("done").asInt()).isEqualTo(1);
        assertThat(would.json().get("canceledKept").asInt()).isEqualTo(1);
        assertThat(would.json().get("deleted").asInt()).isZero();
        assertThat(transactions.countDocuments(stub)).as("nothing pruned by the count").isZero();
        ConsoleFixture.Reply pruned = console.post("/api/prune?olderThan=30m");
        assertThat(pruned.json().get("deleted").asInt()).isEqualTo(1);
        assertThat(pruned.json().get("dryRun").asBoolean()).isFalse();
        assertThat(transactions.countDocuments(stub)).isEqualTo(1);
        assertError(console.get("/api/prune?olderThan=0s"), 400, "BAD_REQUEST");
    }

    @Test
    void actions_arePostOnly_needTheHeader_andRefuseOtherSites() {
        console();
        long before = mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments();

        assertError(console.send("GET", "/api/recover", true), 405, "METHOD_NOT_ALLOWED");
        assertError(console.send("POST", "/api/status", true), 405, "METHOD_NOT_ALLOWED");
        assertError(console.send("POST", "/api/prune?olderThan=0s", false), 403, "FORBIDDEN");
        assertError(console.send(HttpRequest.newBuilder(URI.create(console.url() + "api/prune?olderThan=0s"))
                .POST(HttpRequest.BodyPublishers.noBody()).header(ConsoleServer.TOKEN_HEADER, "x")
                .header("Origin", "http://evil.example").build()), 403, "FORBIDDEN");

        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isEqualTo(before);
    }

    @Test
    void loopbackConsole_refusesAnotherHostName() throws Exception {
        console();
        URI uri = URI.create(console.url());
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET /api/status HTTP/1.1\r\nHost: evil.example:" + uri.getPort() + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String statusLine = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            assertThat(statusLine).contains("403");
        }
    }

    @Test
    void token_everyRequestWithoutItGets401(@TempDir Path dir) throws Exception {
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, "s3cret-token-of-enough-length\n");
        console("--token-file", tokenFile.toString());

        assertError(console.get("/api/status"), 401, "UNAUTHORIZED");
        assertError(console.withToken("wrong-token-of-enough-length").get("/api/transactions"), 401, "UNAUTHORIZED");
        assertError(console.post("/api/recover"), 401, "UNAUTHORIZED");
        ConsoleFixture.Reply page = console.send("GET", "/", false);
        assertThat(page.status()).isEqualTo(401);
        assertThat(page.body()).contains("needs its token").doesNotContain("\"initial\":");

        console.withToken("s3cret-token-of-enough-length");
        assertThat(console.status().get("done").asInt()).isZero();
        assertThat(console.post("/api/recover").status()).isEqualTo(200);
        assertThat(console.get("/").status()).isEqualTo(200);
    }

    @Test
    void publicAddress_withoutAGoodToken_exit2_andNothingServed(@TempDir Path dir) throws Exception {
        CliRunner.Result open = cli.run("console", "--bind", "0.0.0.0", "--port", "0");
        assertThat(open.exitCode()).as(open.toString()).isEqualTo(2);
        assertThat(open.err()).contains("--bind 0.0.0.0", "--token-file");

        Path shortToken = dir.resolve("short");
        Files.writeString(shortToken, "abc");
        CliRunner.Result weak = cli.run("console", "--bind", "0.0.0.0", "--port", "0", "--token-file", shortToken.toString());
        assertThat(weak.exitCode()).isEqualTo(2);
        assertThat(weak.err()).contains("at least 16");
        CliRunner.Result missing = cli.run("console", "--port", "0", "--token-file", dir.resolve("none").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("cannot read --token-file").doesNotContain("Exception");
        assertThat(cli.run("console", "--port", "70000").exitCode()).isEqualTo(2);
        assertThat(cli.run("console", "--bind", "no-such-host.invalid").exitCode()).isEqualTo(2);
    }

    @Test
    void databaseDown_is503_andThePageIsStillServed() {
        EmbeddedServer server = EmbeddedServer.inMemory().start();
        try {
            console = new ConsoleFixture(ConsoleFixture.givingUpQuickly(server.uri(), "down"));
            assertThat(console.status().get("done").asInt()).isZero();

            server.close();
            // Well before the default 30 s of retries: --retry-timeout is what the console's reads obey.
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            ConsoleFixture.Reply r;
            while ((r = console.get("/api/status")).status() == 200 && System.nanoTime() < deadline) {
                ConsoleFixture.pause(100);
            }

            assertError(r, 503, "DATABASE_UNAVAILABLE");
            assertThat(r.json().get("error").asText()).contains("cannot read the database");
            assertThat(JavaLeaks.find(r.json().get("error").asText())).as(r.body()).isEmpty();
            assertThat(console.get("/").status()).isEqualTo(200);
        } finally {
            server.close();
        }
    }

    @Test
    void htmlInIdsAndReasons_comesBackAsPlainJsonText() {
        String evil = "<script>alert(1)</script>";
        mongo.client().getDatabase(mongo.database()).getCollection("transactions").insertOne(new Document("_id", evil)
                .append("state", "canceled").append("reason", "<img src=x onerror=alert(2)>").append("lastModified", new java.util.Date()));
        console();

        JsonNode tx = console.get("/api/transactions/" + URLEncoder.encode(evil, StandardCharsets.UTF_8).replace("+", "%20")).json();

        assertThat(tx.get("id").asText()).isEqualTo(evil);
        assertThat(tx.get("reason").asText()).isEqualTo("<img src=x onerror=alert(2)>");
        Iterator<JsonNode> rows = console.get("/api/transactions").json().get("transactions").elements();
        assertThat(rows.next().get("id").asText()).isEqualTo(evil);
    }

    /** A command's --json keys without "server" and "data", which say where the command connected (the console shows its own). */
    private static List<String> withoutWhere(List<String> keys) {
        return keys.stream().filter(k -> !k.equals("server") && !k.equals("data")).toList();
    }
}
