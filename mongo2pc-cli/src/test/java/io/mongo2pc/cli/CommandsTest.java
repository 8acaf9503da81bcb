package io.mongo2pc.cli;

import io.mongo2pc.testing.TestManagers;
import com.fasterxml.jackson.databind.JsonNode;
import com.mongodb.client.MongoDatabase;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The CLI contract (DESIGN.md): exit codes and exact JSON keys, run in-process against a real embedded server. */
class CommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** A failed test drops its database, so what it left half-done cannot fail the invariant checks of the next ones. */
    @RegisterExtension
    static TestWatcher dropOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            mongo.client().getDatabase(mongo.database()).drop();
        }
    };

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
    }

    private void accounts(long... balances) {
        long total = 0;
        for (int i = 0; i < balances.length; i++) {
            CliRunner.Result r = cli.run("accounts", "create", String.valueOf((char) ('A' + i)), String.valueOf(balances[i]));
            assertThat(r.exitCode()).as(r.toString()).isZero();
            total += balances[i];
        }
        mongo.invariants().expectTotal(mongo.database(), total);
    }

    private MongoDatabase db() {
        return mongo.client().getDatabase(mongo.database());
    }

    private long balance(String id) {
        return ((Number) db().getCollection("accounts").find(new Document("_id", id)).first().get("balance")).longValue();
    }

    @Test
    void accountsList_json_hasTheContractKeys() {
        accounts(1000, 250);

        CliRunner.Result r = cli.run("accounts", "list", "--json");

        assertThat(r.exitCode()).isZero();
        assertThat(r.keys()).containsExactly("accounts", "total", "server", "data");
        JsonNode list = r.json().get("accounts");
        assertThat(list).hasSize(2);
        List<String> itemKeys = new ArrayList<>();
        list.get(0).fieldNames().forEachRemaining(itemKeys::add);
        assertThat(itemKeys).containsExactly("id", "balance", "pending");
        assertThat(list.get(0).get("id").asText()).isEqualTo("A");
        assertThat(list.get(0).get("balance").isNumber()).isTrue();
        assertThat(list.get(0).get("balance").asLong()).isEqualTo(1000);
        assertThat(list.get(1).get("pending").asInt()).isZero();
        assertThat(r.json().get("total").isNumber()).isTrue();
        assertThat(r.json().get("total").asLong()).isEqualTo(1250);
    }

    @Test
    void accountsList_decimalBalances_areJsonNumbers() {
        assertThat(cli.run("accounts", "create", "D", "12.50").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), new org.bson.types.Decimal128(new java.math.BigDecimal("12.50")));

        CliRunner.Result r = cli.run("accounts", "list", "--json");

        assertThat(r.json().get("accounts").get(0).get("balance").isNumber()).isTrue();
        assertThat(r.json().get("accounts").get(0).get("balance").decimalValue()).isEqualByComparingTo("12.5");
        assertThat(r.json().get("total").decimalValue()).isEqualByComparingTo("12.5");
    }

    @Test
    void accountsCreate_existingOrNegative_exit2() {
        accounts(10);

        assertThat(cli.run("accounts", "create", "A", "5").exitCode()).isEqualTo(2);
        assertThat(cli.run("accounts", "create", "Z", "-5").exitCode()).isEqualTo(2);
        assertThat(cli.run("accounts", "create", "Z", "abc").exitCode()).isEqualTo(2);
        assertThat(balance("A")).isEqualTo(10);
    }

    @Test
    void transfer_done_exit0_withIdStateReason() {
        accounts(1000, 1000);

        CliRunner.Result r = cli.run("transfer", "A", "B", "100", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.keys()).contains("id", "state", "reason", "code");
        assertThat(r.json().get("state").asText()).isEqualTo("done");
        assertThat(r.json().get("reason").isNull()).isTrue();
        assertThat(r.json().get("code").isNull()).isTrue();
        assertThat(balance("A")).isEqualTo(900);
        assertThat(balance("B")).isEqualTo(1100);
        Document tx = db().getCollection("transactions").find(new Document("_id", new ObjectId(r.json().get("id").asText()))).first();
        assertThat(tx).containsEntry("source", "A").containsEntry("destination", "B").containsEntry("value", 100L)
                .containsEntry("state", "done");
    }

    @Test
    void transfer_insufficientFunds_exit3_andBalancesUnchanged() {
        accounts(100, 0);

        CliRunner.Result r = cli.run("transfer", "A", "B", "101", "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(3);
        assertThat(r.json().get("state").asText()).isEqualTo("canceled");
        assertThat(r.json().get("reason").asText()).isEqualTo("A has balance 100, the debit needs 101");
        assertThat(r.json().get("code").asText()).isEqualTo("INSUFFICIENT_FUNDS");
        assertThat(r.json().get("failedOperation").get("index").asInt()).isZero();
        assertThat(r.json().get("failedOperation").get("id").asText()).isEqualTo("A");
        assertThat(r.err()).contains("canceled: A has balance 100, the debit needs 101");
        assertThat(balance("A")).isEqualTo(100);
        assertThat(balance("B")).isZero();
    }

    @ParameterizedTest(name = "transfer {0} {1} {2}")
    @CsvSource({
            "A, B, 0",
            "A, B, -5",
            "A, B, abc",
            "A, B, 99999999999999999999",
            "A, B, 1e3",
            "A, A, 5",
            "A, Z, 5",
            "Z, A, 5",
    })
    void transfer_badInput_exit2_andNothingWritten(String source, String destination, String amount) {
        accounts(1000, 1000);

        CliRunner.Result r = cli.run("transfer", source, destination, amount, "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.keys()).containsExactly("error");
        assertThat(r.err()).isNotBlank();
        assertThat(db().getCollection("transactions").countDocuments()).isZero();
        assertThat(balance("A")).isEqualTo(1000);
    }

    @Test
    void transfer_missingArgument_isAUsageError_exit2() {
        CliRunner.Result r = cli.run("transfer", "A", "B", "--json");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.keys()).containsExactly("error");
    }

    @Test
    void submitThenWorkerDrain_runsTheQueue_andInspectShowsDone() {
        accounts(1000, 1000);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            CliRunner.Result r = cli.run("submit", "A", "B", "10", "--json");
            assertThat(r.exitCode()).as(r.toString()).isZero();
            ids.add(r.json().get("id").asText());
        }
        assertThat(cli.run("status", "--json").json().get("initial").asInt()).isEqualTo(10);

        CliRunner.Result worker = cli.run("worker", "--threads", "3", "--drain");

        assertThat(worker.exitCode()).as(worker.toString()).isZero();
        assertThat(balance("A")).isEqualTo(900);
        CliRunner.Result inspect = cli.run("inspect", ids.get(0), "--json");
        assertThat(inspect.exitCode()).isZero();
        assertThat(inspect.json().get("state").asText()).isEqualTo("done");
        assertThat(inspect.json().get("application").asText()).isEqualTo("mongo2pc");
    }

    @Test
    void status_json_hasTheContractKeys() {
        accounts(1000, 1000);
        cli.run("transfer", "A", "B", "1");
        cli.run("transfer", "A", "B", "5000");

        CliRunner.Result r = cli.run("status", "--json");

        assertThat(r.exitCode()).isZero();
        assertThat(r.keys()).containsExactly("initial", "pending", "applied", "done", "canceling", "canceled", "markers",
                "oldestOpenSeconds", "oldestOpenId", "server", "data");
        assertThat(r.json().get("server").asText()).isEqualTo(mongo.uri());
        assertThat(r.json().get("data").isNull()).as("--uri: the server keeps its own data").isTrue();
        assertThat(r.json().get("done").asInt()).isEqualTo(1);
        assertThat(r.json().get("canceled").asInt()).isEqualTo(1);
        assertThat(r.json().get("oldestOpenSeconds").isNumber()).isTrue();
        assertThat(r.json().get("oldestOpenId").isNull()).isTrue();
    }

    @Test
    void verify_ok_exit0_withTheContractKeys() {
        accounts(1000, 500);

        CliRunner.Result r = cli.run("verify", "--expect-total", "1500", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.keys()).containsExactly("ok", "total", "accounts", "negative", "markers", "open", "leftovers", "server", "data");
        assertThat(r.json().get("ok").asBoolean()).isTrue();
        assertThat(r.json().get("total").asLong()).isEqualTo(1500);
        assertThat(r.json().get("accounts").asInt()).isEqualTo(2);
    }

    @Test
    void verify_wrongTotal_exit1() {
        accounts(1000, 500);

        CliRunner.Result r = cli.run("verify", "--expect-total", "1501", "--json");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.json().get("ok").asBoolean()).isFalse();
    }

    @Test
    void verify_expectTotalBeyondOneAmount_isCompared_notRefused() {
        // Regression: a total over 64 bits was refused as bad input, though verify can report one.
        accounts(1000);
        CliRunner.Result r = cli.run("verify", "--expect-total", "9223372036854776807", "--json");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(1);
        assertThat(r.json().get("ok").asBoolean()).isFalse();
        assertThat(cli.run("verify", "--expect-total", "1000.00", "--json").exitCode()).isZero();
        assertThat(cli.run("verify", "--expect-total", "1e3", "--json").exitCode()).isEqualTo(2);
    }

    @Test
    void verify_negativeBalance_exit1() {
        db().getCollection("accounts").insertOne(new Document("_id", "N").append("balance", -5L).append("pendingTransactions", List.of()));
        try {
            CliRunner.Result r = cli.run("verify", "--json");

            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.json().get("ok").asBoolean()).isFalse();
            assertThat(r.json().get("negative").asInt()).isEqualTo(1);
        } finally {
            db().drop();
        }
    }

    @Test
    void verify_balanceThatIsNotANumber_notOk_exit1_andAccountsListStillLists() {
        // Regression: both ended in a ClassCastException (exit 1 without the contract's keys).
        accounts(10);
        db().getCollection("accounts").insertMany(List.of(
                new Document("_id", "S").append("balance", "abc").append("pendingTransactions", List.of()),
                new Document("_id", "T").append("balance", Double.NaN).append("pendingTransactions", List.of()),
                new Document("_id", "U").append("balance", org.bson.types.Decimal128.NEGATIVE_INFINITY).append("pendingTransactions", List.of()),
                new Document("_id", "V").append("balance", org.bson.types.Decimal128.NEGATIVE_ZERO).append("pendingTransactions", List.of())));
        try {
            CliRunner.Result list = cli.run("accounts", "list", "--json");
            assertThat(list.exitCode()).as(list.toString()).isZero();
            assertThat(list.keys()).containsExactly("accounts", "total", "server", "data");
            assertThat(list.json().get("total").asLong()).isEqualTo(10);

            CliRunner.Result r = cli.run("verify", "--json");
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(1);
            assertThat(r.keys()).containsExactly("ok", "total", "accounts", "negative", "markers", "open", "leftovers", "server", "data");
            assertThat(r.json().get("ok").asBoolean()).isFalse();
            assertThat(r.json().get("accounts").asInt()).isEqualTo(5);
            assertThat(r.err()).contains("balance is missing or not a number");
        } finally {
            db().drop();
        }
    }

    @Test
    void verify_leftoverMarker_exit1() {
        db().getCollection("accounts").insertOne(new Document("_id", "M").append("balance", 5L)
                .append("pendingTransactions", List.of(new ObjectId())));
        try {
            CliRunner.Result r = cli.run("verify", "--json");

            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.json().get("ok").asBoolean()).isFalse();
            assertThat(r.json().get("markers").asInt()).isEqualTo(1);
            assertThat(cli.run("status", "--json").json().get("markers").asInt()).isEqualTo(1);
        } finally {
            db().drop();
        }
    }

    /**
     * A transfer whose process died after its debit, its document pending (round 1 inserts it: no
     * commit insert); {@code recover} by another process rolls it forward.
     */
    @Test
    void recover_rollsForwardACrashedTransfer_withTheContractKeys() {
        accounts(1000, 1000);
        TransactionManager crashy = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "crashy")
                .lease(Duration.ofSeconds(30)).commitInsert(false)
                .crashHook(crashAt(CrashPoint.after(CrashPoint.Step.APPLY, 0)))).build();
        try {
            new Bank(crashy).transfer("A", "B", 100L);
        } catch (IllegalStateException expected) {
            // the simulated crash
        }
        assertThat(balance("A")).isEqualTo(900);
        assertThat(cli.run("verify").exitCode()).isEqualTo(1);
        assertThat(cli.run("recover", "--older-than", "0s", "--json").json().get("rolledForward").asInt())
                .as("the owner's own 30s lease has not expired: --older-than cannot shorten it").isZero();

        mongo.expireLeases(mongo.database()); // the crashed owner is dead: its lease runs out
        CliRunner.Result r = cli.run("recover", "--older-than", "0s", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.keys()).startsWith("rolledForward", "canceled", "skipped", "failed", "notStale", "lateInsertsRemoved");
        assertThat(r.json().get("failed").asInt()).isZero();
        assertThat(r.json().get("rolledForward").asInt()).isEqualTo(1);
        assertThat(balance("A")).isEqualTo(900);
        assertThat(balance("B")).isEqualTo(1100);
        assertThat(cli.run("verify", "--expect-total", "2000").exitCode()).isZero();
    }

    @Test
    void cancel_queued_exit0_done_exit3_unknown_exit4() {
        accounts(1000, 1000);
        String queued = cli.run("submit", "A", "B", "10").out().trim();
        CliRunner.Result done = cli.run("transfer", "A", "B", "10", "--json");

        CliRunner.Result canceled = cli.run("cancel", queued, "--json");
        assertThat(canceled.exitCode()).as(canceled.toString()).isZero();
        assertThat(canceled.json().get("state").asText()).isEqualTo("canceled");
        assertThat(canceled.json().get("code").asText()).isEqualTo("CANCELED_BY_OPERATOR");
        assertThat(canceled.json().get("alreadyCanceled").asBoolean()).isFalse();
        CliRunner.Result again = cli.run("cancel", queued, "--json");
        assertThat(again.exitCode()).as(again.toString()).isZero();
        assertThat(again.json().get("alreadyCanceled").asBoolean()).isTrue();
        assertThat(cli.run("cancel", done.json().get("id").asText()).exitCode()).isEqualTo(3);
        assertThat(cli.run("cancel", new ObjectId().toHexString()).exitCode()).as("not found").isEqualTo(4);
        assertThat(cli.run("inspect", "nope").exitCode()).as("not found").isEqualTo(4);
        assertThat(balance("A")).isEqualTo(990);
    }

    @Test
    void cancel_pendingOwnedByALiveOwner_exit3() {
        accounts(1000, 1000);
        TransactionManager crashy = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), "live")
                .lease(Duration.ofMinutes(5)).commitInsert(false) // its document pending
                .crashHook(crashAt(CrashPoint.after(CrashPoint.Step.APPLY, 0)))).build();
        Object id = null;
        try {
            new Bank(crashy).transfer("A", "B", 100L);
        } catch (IllegalStateException e) {
            id = e.getMessage();
        }

        CliRunner.Result r = cli.run("--lease", "5m", "cancel", String.valueOf(id));

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(3);
        assertThat(r.err()).contains("owned by");
        // clean up: the owner is dead; once its own lease has run out, a cancel undoes the debit
        mongo.expireLeases(mongo.database());
        CliRunner.Result after = cli.run("cancel", String.valueOf(id));
        assertThat(after.exitCode()).as(after.toString()).isZero();
        assertThat(balance("A")).isEqualTo(1000);
    }

    @Test
    void inspect_tutorialStyleIntegerId_isFound() {
        db().getCollection("transactions").insertOne(new Document("_id", 1).append("source", "A").append("destination", "B")
                .append("value", 100).append("state", "done"));

        CliRunner.Result r = cli.run("inspect", "1", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("_id").asInt()).isEqualTo(1);
        assertThat(r.json().get("state").asText()).isEqualTo("done");
    }

    @Test
    void badDuration_exit2_withAClearMessage() {
        CliRunner.Result r = cli.run("--lease", "5 minutes", "status");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("'5 minutes' is not a duration");
        assertThat(cli.run("recover", "--older-than", "-1s").exitCode()).isEqualTo(2);
    }

    @Test
    void unreachableUri_exit1_fast() {
        long start = System.nanoTime();
        CliRunner.Result r = new CliRunner("--uri", "mongodb://127.0.0.1:1", "--db", mongo.database()).run("status", "--json");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("cannot reach MongoDB at mongodb://127.0.0.1:1");
        assertThat(r.keys()).containsExactly("error");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    }

    @Test
    void plainCommandLine_withoutOurHandlers_givesTheSameExitCodes() {
        accounts(10, 10);
        StringWriter out = new StringWriter();
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(new StringWriter()));

        assertThat(cl.execute("--uri", mongo.uri(), "--db", mongo.database(), "transfer", "A", "B", "11")).isEqualTo(3);
        assertThat(cl.execute("--uri", mongo.uri(), "--db", mongo.database(), "transfer", "A", "B", "x")).isEqualTo(2);
        assertThat(cl.execute("--uri", mongo.uri(), "--db", mongo.database(), "transfer", "A", "B")).isEqualTo(2);
    }

    @Test
    void demo_runsInItsOwnDatabase_leavesTheUsersAlone_andPassesEveryTime() {
        // given the user's own books, with an amount of three decimal places
        assertThat(cli.run("accounts", "create", "U", "795.245").exitCode()).isZero();

        CliRunner.Result r = cli.run("demo", "--transfers", "60");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("CRASH at after-apply[0]", "rolled forward", "Demo finished", "--db " + mongo.database() + "_demo");
        assertThat(r.out()).contains("whole database: OK: total 5000 (expected 5000)");

        CliRunner.Result again = cli.run("demo", "--transfers", "10");
        assertThat(again.exitCode()).as(again.toString()).isZero();
        assertThat(again.out()).contains("whole database: OK: total 5000 (expected 5000)");
        // the user's database still holds only the user's account, unchanged
        assertThat(cli.run("verify", "--expect-total", "795.245").exitCode()).isZero();
        mongo.client().getDatabase(mongo.database() + "_demo").drop();
    }

    /** Throws once at {@code point}, with the transaction id as message: the process "dies" there. */
    private static CrashHook crashAt(CrashPoint point) {
        java.util.concurrent.atomic.AtomicBoolean fired = new java.util.concurrent.atomic.AtomicBoolean();
        return (p, id) -> {
            if (p.equals(point) && fired.compareAndSet(false, true)) {
                throw new IllegalStateException(String.valueOf(id));
            }
        };
    }
}
