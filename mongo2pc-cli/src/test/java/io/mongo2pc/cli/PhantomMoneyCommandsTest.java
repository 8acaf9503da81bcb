package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.testing.LateInsertCopies;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (found by an independent check): a late copy of a canceled insert of an account made
 * {@code verify --expect-total 1000} report a total of 1,500, markers 0. {@code verify} counts
 * committed state only, names the document as a leftover (what, where, which transaction), and
 * {@code recover} removes it and says so.
 */
@Tag("slow")
class PhantomMoneyCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;
    String db;

    @BeforeEach
    void setUp() {
        db = mongo.database();
        cli = new CliRunner("--uri", mongo.uri(), "--db", db);
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        mongo.invariants().expectTotal(db, 1_000L);
    }

    @Test
    void verify_lateInsertCopyOfAnAccount_isALeftoverNotMoney_recoverRemovesItAndSaysSo() throws Exception {
        // given an account of 1,000 and a late copy of a canceled insert of account "ghost" with 500
        TransactionOutcome canceled = LateInsertCopies.landAfterCancel(mongo.uri(), mongo.client(), db,
                DocumentRef.of(db, "accounts", "ghost"), new Document("balance", 500L), DocumentRef.of(db, "accounts", "A"));
        String id = String.valueOf(TransactionIds.printable(canceled.id()));

        // when the books are checked
        CliRunner.Result verify = cli.run("verify", "--expect-total", "1000", "--json");
        CliRunner.Result verifyText = cli.run("verify", "--expect-total", "1000");

        // then the copy is no money, and is named as a leftover of its transaction
        assertThat(verify.json().get("total").asLong()).as(verify.toString()).isEqualTo(1000);
        assertThat(verify.json().get("accounts").asInt()).isEqualTo(1);
        JsonNode leftover = verify.json().get("leftovers").get(0);
        assertThat(verify.json().get("leftovers")).hasSize(1);
        assertThat(leftover.get("account").asText()).isEqualTo("ghost");
        assertThat(leftover.get("transaction").asText()).isEqualTo(id);
        assertThat(leftover.get("kind").asText()).isEqualTo("insert");
        assertThat(leftover.get("late").asBoolean()).isTrue();
        assertThat(verify.exitCode()).as("not ok until recovery removes it").isEqualTo(1);
        assertThat(verifyText.out()).contains("total 1000 (expected 1000)",
                "leftover in accounts: ghost, left by a late copy of the insert of transaction " + id);
        assertThat(verifyText.err()).contains("1 leftover document(s) in accounts", "run `mongo2pc recover`");

        // when recover runs, then it removes the copy and says so
        CliRunner.Result recover = cli.run("recover", "--json");
        assertThat(recover.json().get("lateInsertsRemoved").asInt()).as(recover.toString()).isEqualTo(1);
        JsonNode removed = recover.json().get("lateInserts").get(0);
        assertThat(removed.get("coll").asText()).isEqualTo("accounts");
        assertThat(removed.get("id").asText()).isEqualTo("ghost");
        assertThat(removed.get("transaction").asText()).isEqualTo(id);
        assertThat(cli.run("verify", "--expect-total", "1000").exitCode()).isZero();
    }

    @Test
    void recover_saysWhichLateInsertCopiesItRemoved() throws Exception {
        TransactionOutcome canceled = LateInsertCopies.landAfterCancel(mongo.uri(), mongo.client(), db,
                DocumentRef.of(db, "items", "ghost"), new Document("v", 0L), DocumentRef.of(db, "accounts", "A"));

        CliRunner.Result recover = cli.run("recover");

        assertThat(recover.out()).as(recover.toString()).contains("1 documents left by late inserts removed",
                "removed default/" + db + ".items/ghost: left by a late copy of the insert of transaction "
                        + TransactionIds.printable(canceled.id()));
    }
}
