package io.mongo2pc.cli;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code tx} and {@code read [--committed]}: the contract's exit codes and JSON keys, across two targets. */
class TxAndReadCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();
    @RegisterExtension
    static EmbeddedMongo shop = EmbeddedMongo.inMemory();

    @TempDir
    Path dir;

    CliRunner cli;
    String db;
    String shopDb;

    @BeforeEach
    void setUp() {
        db = mongo.database();
        shopDb = shop.database();
        cli = new CliRunner("--uri", mongo.uri(), "--db", db);
        shop.client().getDatabase(shopDb).getCollection("orders").insertOne(new Document("_id", "o1").append("state", "UnPaid"));
        shop.client().getDatabase(shopDb).getCollection("carts").insertOne(new Document("_id", "c9").append("items", List.of("book")));
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()));
        mongo.invariants().expectTotal(db, 100L);
    }

    private String payment(long amount) {
        return """
                {"ops": [
                  {"op": "insert", "target": "shop", "db": "%2$s", "coll": "payments", "doc": {"_id": "p1", "order": "o1", "amount": %3$d}},
                  {"op": "update", "target": "shop", "db": "%2$s", "coll": "orders", "id": "o1", "update": {"$set": {"state": "Paid"}}, "guard": {"state": "UnPaid"}},
                  {"op": "update", "db": "%1$s", "coll": "accounts", "id": "A", "update": {"$inc": {"balance": -%3$d}}, "guard": {"balance": {"$gte": %3$d}}},
                  {"op": "delete", "target": "shop", "db": "%2$s", "coll": "carts", "id": "c9"}
                ]}""".formatted(db, shopDb, amount);
    }

    private Path file(String json) throws IOException {
        Path file = dir.resolve("tx.json");
        Files.writeString(file, json);
        return file;
    }

    private MongoDatabase shopDatabase() {
        return shop.client().getDatabase(shopDb);
    }

    @Test
    void targetGivenBeforeTheCommand_isAcceptedByTxAndRead() throws IOException {
        CliRunner before = new CliRunner("--uri", mongo.uri(), "--db", db, "--target", "shop=" + shop.uri());

        CliRunner.Result r = before.run("tx", file(payment(30)).toString(), "--json");
        CliRunner.Result read = before.run("read", "--committed", "--target", "shop", shopDb, "orders", "o1", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("state").asText()).isEqualTo("done");
        assertThat(read.exitCode()).as(read.toString()).isZero();
        assertThat(read.json().get("state").asText()).isEqualTo("Paid");
        mongo.invariants().expectTotal(db, 70L);
    }

    @Test
    void tx_paymentAcrossTwoTargets_done_exit0_withTheContractKeys() throws IOException {
        CliRunner.Result r = cli.run("tx", file(payment(30)).toString(), "--target", "shop=" + shop.uri(), "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.keys()).containsExactly("id", "state", "reason", "code", "alreadyRan", "server", "data");
        assertThat(r.json().get("state").asText()).isEqualTo("done");
        assertThat(shopDatabase().getCollection("orders").find().first().getString("state")).isEqualTo("Paid");
        assertThat(shopDatabase().getCollection("payments").countDocuments()).isEqualTo(1);
        assertThat(shopDatabase().getCollection("carts").countDocuments()).isZero();
        mongo.invariants().expectTotal(db, 70L);
    }

    @Test
    void tx_guardDoesNotHold_canceled_exit3_nothingInEffect() throws IOException {
        CliRunner.Result r = cli.run("tx", file(payment(500)).toString(), "--target", "shop=" + shop.uri(), "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(3);
        assertThat(r.json().get("state").asText()).isEqualTo("canceled");
        assertThat(r.json().get("reason").asText()).isEqualTo("A has balance 100, the debit needs 500");
        assertThat(r.json().get("code").asText()).isEqualTo("INSUFFICIENT_FUNDS");
        assertThat(r.json().get("failedOperation").toString()).isEqualTo("{\"index\":2,\"target\":\"default\",\"db\":\"" + db
                + "\",\"coll\":\"accounts\",\"id\":\"A\"}");
        assertThat(shopDatabase().getCollection("orders").find().first().getString("state")).isEqualTo("UnPaid");
        assertThat(shopDatabase().getCollection("payments").countDocuments()).isZero();
        assertThat(shopDatabase().getCollection("carts").countDocuments()).isEqualTo(1);
    }

    @Test
    void tx_stockGuardDoesNotHold_guardFailed_withTheGuardAndTheStockShown_andTheOperationNamed() throws IOException {
        shopDatabase().getCollection("stock").insertOne(new Document("_id", "widget").append("qty", 3));
        String order = """
                {"ops": [
                  {"op": "update", "target": "shop", "db": "%1$s", "coll": "orders", "id": "o1", "update": {"$set": {"state": "Paid"}}},
                  {"op": "inc", "target": "shop", "db": "%1$s", "coll": "stock", "id": "widget", "inc": {"qty": -5}, "guard": {"qty": {"$gte": 5}}}
                ]}""".formatted(shopDb);

        CliRunner.Result json = cli.run("tx", file(order).toString(), "--target", "shop=" + shop.uri(), "--json");
        CliRunner.Result human = cli.run("tx", file(order).toString(), "--target", "shop=" + shop.uri());

        assertThat(json.exitCode()).as(json.toString()).isEqualTo(3);
        assertThat(json.json().get("code").asText()).isEqualTo("GUARD_FAILED");
        assertThat(json.json().get("reason").asText())
                .isEqualTo("guard {\"qty\": {\"$gte\": 5}} does not hold on shop/" + shopDb + ".stock/widget: qty is 3");
        assertThat(json.json().get("failedOperation").get("index").asInt()).isEqualTo(1);
        assertThat(json.json().get("failedOperation").get("id").asText()).isEqualTo("widget");
        assertThat(human.out()).contains("canceled by operation 1 on shop/" + shopDb + ".stock/widget: guard");
        assertThat(shopDatabase().getCollection("stock").find().first().get("qty")).isEqualTo(3);
        assertThat(shopDatabase().getCollection("orders").find().first().getString("state")).isEqualTo("UnPaid");
    }

    @Test
    void tx_badInput_exit2_nothingWritten() throws IOException {
        String where = payment(30).replace("\"guard\": {\"state\": \"UnPaid\"}", "\"guard\": {\"$where\": \"sleep(1000)\"}");
        assertThat(cli.run("tx", file(where).toString(), "--target", "shop=" + shop.uri()).exitCode()).isEqualTo(2);
        assertThat(cli.run("tx", file("{\"ops\": [}").toString()).exitCode()).isEqualTo(2);
        assertThat(cli.run("tx", dir.resolve("missing.json").toString()).exitCode()).isEqualTo(2);
        CliRunner.Result unknownTarget = cli.run("tx", file(payment(30)).toString(), "--json");
        assertThat(unknownTarget.exitCode()).isEqualTo(2);
        assertThat(unknownTarget.json().get("error").asText()).contains("unknown target 'shop'");
        CliRunner.Result reserved = cli.run("tx", file(payment(30).replace("\"$inc\": {\"balance\"", "\"$inc\": {\"pendingTransactions\"")).toString(),
                "--target", "shop=" + shop.uri());
        assertThat(reserved.exitCode()).as(reserved.toString()).isEqualTo(2);
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments()).isZero();
        assertThat(shopDatabase().getCollection("orders").find().first().getString("state")).isEqualTo("UnPaid");
    }

    @Test
    void tx_jsonThatSaysTwoThings_orIsNotJson_exit2_nothingWritten() throws IOException {
        // Regression: the lenient extended-JSON reader ran the first object of two, the last of
        // duplicate keys, and shell syntax.
        String one = payment(30);
        String opsOnly = one.substring(one.indexOf('['), one.lastIndexOf(']') + 1);
        List<String> bad = List.of(
                one + " xyz",
                one + " ]]]",
                one + "{\"ops\": []}",
                "{\"ops\": [], \"ops\": " + opsOnly + "}",
                one.replace("\"id\": \"o1\"", "\"id\": \"o1\", \"id\": \"o2\""),
                one.replace("\"ops\"", "ops"),
                one.replace("\"UnPaid\"", "'UnPaid'"),
                one + " // a comment");
        for (String json : bad) {
            CliRunner.Result r = cli.run("tx", file(json).toString(), "--target", "shop=" + shop.uri(), "--json");
            assertThat(r.exitCode()).as(json + " -> " + r).isEqualTo(2);
            assertThat(r.json().get("error").asText()).as(json).startsWith("not valid JSON");
        }
        Path latin1 = dir.resolve("latin1.json");
        Files.write(latin1, one.replace("UnPaid", "Unbezahlt\u00e9").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        CliRunner.Result notUtf8 = cli.run("tx", latin1.toString(), "--target", "shop=" + shop.uri(), "--json");
        assertThat(notUtf8.exitCode()).as(notUtf8.toString()).isEqualTo(2);
        assertThat(notUtf8.json().get("error").asText()).contains("not UTF-8");
        CliRunner.Result directory = cli.run("tx", dir.toString(), "--json");
        assertThat(directory.exitCode()).as(directory.toString()).isEqualTo(2);
        assertThat(directory.json().get("error").asText()).contains("is a directory");

        assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments()).isZero();
        assertThat(shopDatabase().getCollection("orders").find().first().getString("state")).isEqualTo("UnPaid");
        assertThat(shopDatabase().getCollection("payments").countDocuments()).isZero();
    }

    @Test
    void tx_onASystemCollection_orBadNames_exit2_nothingWritten() throws IOException {
        // Regression: an insert into system.x passed validation, the server refused its release,
        // and the transaction stayed applied for good.
        String system = "{\"ops\": [{\"op\": \"insert\", \"db\": \"%s\", \"coll\": \"system.x\", \"doc\": {\"_id\": \"a\"}}]}".formatted(db);
        CliRunner.Result r = cli.run("tx", file(system).toString(), "--json");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.json().get("error").asText()).contains("system collections");
        for (String name : List.of("a/b", "x y")) {
            CliRunner.Result badDb = cli.run("tx", file(system.replace("system.x", "c").replace(db, name)).toString(), "--json");
            assertThat(badDb.exitCode()).as(name + ": " + badDb).isEqualTo(2);
            assertThat(new CliRunner("--uri", mongo.uri(), "--db", name).run("status", "--json").exitCode()).as("--db " + name).isEqualTo(2);
            assertThat(cli.run("read", name, "accounts", "A", "--json").exitCode()).as("read " + name).isEqualTo(2);
        }
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments()).isZero();
        assertThat(mongo.client().getDatabase(db).listCollectionNames().into(new java.util.ArrayList<>())).doesNotContain("system.x");
    }

    @Test
    void read_plainAndCommitted_ofADocumentInFlight_exit0or4() {
        // An owner dies after inserting p1 and taking o1: the payment is in flight, not committed.
        TransactionManager crashing = TransactionManager.builder().target("default", mongo.client()).target("shop", shop.client())
                .database(db).commitInsert(false).crashHook((p, id) -> { // its document pending: recovery rolls it forward
                    if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 1))) {
                        throw new IllegalStateException("crash");
                    }
                }).build();
        assertThatThrownBy(() -> crashing.run(TransactionJson.parse(payment(30)))).hasMessage("crash");
        String target = "shop=" + shop.uri();

        CliRunner.Result plain = cli.run("read", "--target", target, shopDb, "payments", "p1", "--json");
        CliRunner.Result committed = cli.run("read", "--committed", "--target", target, shopDb, "payments", "p1", "--json");
        CliRunner.Result order = cli.run("read", "--committed", "--target", target, shopDb, "orders", "o1", "--json");
        CliRunner.Result missing = cli.run("read", "--target", target, shopDb, "orders", "nope");

        assertThat(plain.exitCode()).as(plain.toString()).isZero();
        assertThat(plain.json().get("amount").asInt()).isEqualTo(30);
        assertThat(committed.exitCode()).as(committed.toString()).isEqualTo(4);
        assertThat(order.exitCode()).isZero();
        assertThat(order.json().get("state").asText()).isEqualTo("UnPaid");
        assertThat(order.json().has("_m2pc")).isFalse();
        assertThat(missing.exitCode()).isEqualTo(4);

        // The owner is dead: once its lease has run out, recovery with the shop target rolls the payment forward.
        mongo.expireLeases(db);
        CliRunner.Result recovered = cli.run("recover", "--target", target, "--json");
        assertThat(recovered.json().get("rolledForward").asInt()).as(recovered.toString()).isEqualTo(1);
        assertThat(cli.run("read", "--committed", "--target", target, shopDb, "payments", "p1").exitCode()).isZero();
        mongo.invariants().expectTotal(db, 70L);
    }
}
