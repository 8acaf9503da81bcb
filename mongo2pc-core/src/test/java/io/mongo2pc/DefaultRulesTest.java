package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default rules: a manager built without {@code twoRoundCommit} runs every transaction
 * (inserts, updates, deletes and queued ones included) by the two-round commit and returns it at
 * the commit point; so does {@code twoRoundCommit(true)}; {@code twoRoundCommit(false)} runs
 * everything by the tutorial's rules.
 */
class DefaultRulesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TwoAccounts accounts;

    private TransactionManagerBuilder builder(String application) {
        accounts = accounts == null ? TwoAccounts.create(mongo, 100, 0) : accounts;
        mongo.invariants().expectTotal(mongo.database(), 100);
        return TestManagers.builder(mongo.client(), mongo.database(), application);
    }

    private List<Operation> transfer(long value) {
        return List.of(Operation.increment(accounts.a(), "balance", -value, new Document("balance", new Document("$gte", value))),
                Operation.increment(accounts.b(), "balance", value, null));
    }

    private List<Operation> transferAndInsert(long value, String note) {
        return List.of(transfer(value).get(0), transfer(value).get(1),
                Operation.insert(DocumentRef.of(mongo.database(), "notes", note), new Document("text", note)));
    }

    private Document stored(Object id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions").find(new Document("_id", id)).first();
    }

    @Test
    void byDefault_incrementsRunByTheTwoRoundCommit_andReturnAtTheCommitPoint() {
        TransactionManagerSettings settings;
        TransactionOutcome outcome;
        try (TransactionManager manager = builder("default").build()) {
            settings = manager.settings();
            outcome = manager.run(transfer(10));
            assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.APPLIED);
        }
        assertThat(settings.twoRoundCommit()).isTrue();
        assertThat(settings.tutorialRulesFallback()).isTrue();
        assertThat(settings.finishInBackground()).isTrue();
        assertThat(stored(outcome.id()).get("protocol")).as("the two-round rules").isEqualTo(2);
        assertThat(stored(outcome.id()).getString("state")).as("finished by close()").isEqualTo("done");
    }

    @Test
    void byDefault_insertsAndQueuedTransactions_runByTheTwoRoundCommit() {
        MongoCollection<Document> notes = mongo.client().getDatabase(mongo.database()).getCollection("notes");
        Object queued;
        try (TransactionManager manager = builder("default").build()) {
            TransactionOutcome outcome = manager.run(transferAndInsert(10, "n1"));
            assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
            assertThat(stored(outcome.id()).get("protocol")).as("the two-round rules").isEqualTo(2);
            queued = manager.submit(transfer(5));
            assertThat(stored(queued).getString("state")).isEqualTo("initial");
            assertThat(manager.claimAndRun().orElseThrow().isCommitted()).isTrue();
        }
        assertThat(stored(queued).get("protocol")).isEqualTo(2);
        assertThat(stored(queued).getString("state")).isEqualTo("done");
        assertThat(notes.countDocuments(new Document("_id", "n1"))).isEqualTo(1);
        assertThat(accounts.collection().find(new Document("_id", "B")).first().getLong("balance")).isEqualTo(15L);
    }

    @Test
    void twoRoundCommitTrue_runsInsertsAndQueuedTransactionsByTheTwoRoundCommit() {
        Object queued;
        try (TransactionManager manager = builder("strict").twoRoundCommit(true).build()) {
            assertThat(manager.settings().tutorialRulesFallback()).isFalse();
            TransactionOutcome outcome = manager.run(transferAndInsert(10, "n2"));
            assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
            assertThat(stored(outcome.id()).get("protocol")).isEqualTo(2);
            queued = manager.submit(transfer(5));
            assertThat(manager.claimAndRun().orElseThrow().isCommitted()).isTrue();
        }
        assertThat(stored(queued).get("protocol")).isEqualTo(2);
        assertThat(accounts.collection().find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(85L);
    }

    @Test
    void twoRoundCommitFalse_runsEverythingByTheTutorialsRules() {
        try (TransactionManager manager = builder("tutorial").twoRoundCommit(false).finishInBackground(false).build()) {
            assertThat(manager.settings().twoRoundCommit()).isFalse();
            TransactionOutcome outcome = manager.run(transfer(10));
            assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
            assertThat(stored(outcome.id()).containsKey("protocol")).isFalse();
            assertThat(manager.awaitFinished(Duration.ZERO)).isTrue();
        }
    }
}
