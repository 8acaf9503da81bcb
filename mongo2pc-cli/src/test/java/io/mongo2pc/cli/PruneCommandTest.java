package io.mongo2pc.cli;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code prune}: the age it refuses without {@code --force}, {@code --dry-run}, the canceled
 * transactions it keeps without {@code --include-canceled}, {@code --forget-ids}, and the stub that
 * keeps a caller's id from running twice; run in-process against a real embedded server.
 */
class PruneCommandTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final List<String> KEYS = List.of("deleted", "done", "canceled", "canceledKept", "dryRun", "idsKept", "minimumAge");

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "1000").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), 2000);
    }

    private MongoCollection<Document> transactions() {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions");
    }

    private long stubs() {
        return transactions().countDocuments(new Document("pruned", new Document("$exists", true)));
    }

    /** One transfer done and one canceled (insufficient funds). */
    private void doneAndCanceled() {
        assertThat(cli.run("transfer", "A", "B", "1").exitCode()).isZero();
        assertThat(cli.run("transfer", "A", "B", "5000").exitCode()).isEqualTo(3);
    }

    @Test
    void prune_youngerThanTheLeasePlusTheSkewMargin_exit2_unlessForced() {
        doneAndCanceled();

        CliRunner.Result refused = cli.run("prune", "--older-than", "0s");
        CliRunner.Result forced = cli.run("prune", "--older-than", "0s", "--force");

        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(2);
        assertThat(refused.err()).contains("31s").contains("lease").contains("--force").doesNotContain("Exception");
        assertThat(forced.exitCode()).as(forced.toString()).isZero();
        assertThat(forced.out()).contains("deleted 1").contains("kept 1 canceled");
        assertThat(stubs()).as("one stub, after the forced prune only").isEqualTo(1);
        assertThat(cli.run("status", "--json").json().get("done").asInt()).as("a stub is no transaction any more").isZero();
    }

    @Test
    void prune_dryRun_countsByState_andRemovesNothing() {
        doneAndCanceled();

        CliRunner.Result dry = cli.run("prune", "--older-than", "0s", "--force", "--dry-run", "--json");
        CliRunner.Result withCanceled = cli.run("prune", "--older-than", "0s", "--force", "--dry-run", "--include-canceled", "--json");
        CliRunner.Result human = cli.run("prune", "--older-than", "0s", "--force", "--dry-run");

        assertThat(dry.exitCode()).as(dry.toString()).isZero();
        assertThat(dry.keys()).containsExactlyElementsOf(KEYS);
        assertThat(dry.json().get("dryRun").asBoolean()).isTrue();
        assertThat(dry.json().get("deleted").asInt()).isZero();
        assertThat(dry.json().get("done").asInt()).isEqualTo(1);
        assertThat(dry.json().get("canceled").asInt()).isZero();
        assertThat(dry.json().get("canceledKept").asInt()).isEqualTo(1);
        assertThat(dry.json().get("minimumAge").asText()).isEqualTo("31s");
        assertThat(withCanceled.json().get("canceled").asInt()).isEqualTo(1);
        assertThat(withCanceled.json().get("canceledKept").asInt()).isZero();
        assertThat(human.out()).startsWith("would delete 1 finished transaction(s)");
        assertThat(stubs()).as("nothing pruned").isZero();
        assertThat(cli.run("prune", "--older-than", "0s", "--dry-run").exitCode()).as("the dry run refuses as for real").isEqualTo(2);
    }

    @Test
    void prune_keepsCanceledTransactions_unlessIncludeCanceled() {
        doneAndCanceled();

        CliRunner.Result first = cli.run("prune", "--older-than", "0s", "--force", "--json");
        Document canceled = transactions().find(new Document("state", "canceled")).first();
        CliRunner.Result second = cli.run("prune", "--older-than", "0s", "--force", "--include-canceled", "--json");

        assertThat(first.json().get("deleted").asInt()).isEqualTo(1);
        assertThat(canceled).as("the canceled transaction, whole").containsKey("reason").doesNotContainKey("pruned");
        assertThat(second.json().get("deleted").asInt()).isEqualTo(1);
        assertThat(second.json().get("canceled").asInt()).isEqualTo(1);
        assertThat(stubs()).isEqualTo(2);
        assertThat(transactions().find(new Document("state", "canceled")).first())
                .as("its stub keeps why it was canceled").containsEntry("code", "INSUFFICIENT_FUNDS");
    }

    @Test
    void prune_forgetIds_leavesNothing() {
        doneAndCanceled();
        cli.run("prune", "--older-than", "0s", "--force");

        CliRunner.Result r = cli.run("prune", "--older-than", "0s", "--force", "--include-canceled", "--forget-ids", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("deleted").asInt()).as("the stub and the canceled transaction").isEqualTo(2);
        assertThat(r.json().get("idsKept").asBoolean()).isFalse();
        assertThat(transactions().countDocuments()).isZero();
    }

    @Test
    void inspect_prunedTransaction_showsItsOutcomeFromItsStub() {
        assertThat(cli.run("transfer", "A", "B", "10").exitCode()).isZero();
        String id = ((ObjectId) transactions().find().first().get("_id")).toHexString();
        cli.run("prune", "--older-than", "0s", "--force");

        CliRunner.Result r = cli.run("inspect", id, "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.json().get("state").asText()).isEqualTo("done");
        assertThat(r.json().has("pruned")).as(r.out()).isTrue();
    }

    @Test
    void transfer_idRunAgainAfterPrune_movesNothing() {
        assertThat(cli.run("transfer", "A", "B", "10", "--id", "order-1").exitCode()).isZero();
        cli.run("prune", "--older-than", "0s", "--force");

        CliRunner.Result again = cli.run("transfer", "A", "B", "10", "--id", "order-1", "--json");

        assertThat(again.exitCode()).as(again.toString()).isZero();
        assertThat(again.json().get("state").asText()).isEqualTo("done");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("accounts").find(new Document("_id", "A")).first()
                .get("balance")).as("moved once").isEqualTo(990L);
    }
}
