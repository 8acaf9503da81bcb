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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The default rules: a manager built without {@code twoRoundCommit} runs transactions of
 * increments by the two-round commit and returns them at the commit point, and runs what the
 * two-round commit cannot run yet (inserts, updates, deletes, queued transactions) by the
 * tutorial's rules instead of refusing it; {@code twoRoundCommit(true)} refuses those, and
 * {@code twoRoundCommit(false)} runs everything by the tutorial's rules.
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
    void byDefault_whatTheTwoRoundCommitCannotRun_followsTheTutorialsRules_insteadOfBeingRefused() {
        MongoCollection<Document> notes = mongo.client().getDatabase(mongo.database()).getCollection("notes");
        Object queued;
        try (TransactionManager manager = builder("default").build()) {
            TransactionOutcome outcome = manager.run(transferAndInsert(10, "n1"));
            assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
            assertThat(stored(outcome.id()).containsKey("protocol")).as("the tutorial's rules").isFalse();
            queued = manager.submit(transfer(5));
            assertThat(stored(queued).getString("state")).isEqualTo("initial");
            assertThat(manager.claimAndRun().orElseThrow().isCommitted()).isTrue();
        }
        assertThat(stored(queued).containsKey("protocol")).isFalse();
        assertThat(stored(queued).getString("state")).isEqualTo("done");
        assertThat(notes.countDocuments(new Document("_id", "n1"))).isEqualTo(1);
        assertThat(accounts.collection().find(new Document("_id", "B")).first().getLong("balance")).isEqualTo(15L);
    }

    @Test
    void twoRoundCommitTrue_refusesWhatItCannotRun_beforeAnythingIsWritten() {
        try (TransactionManager manager = builder("strict").twoRoundCommit(true).build()) {
            assertThat(manager.settings().tutorialRulesFallback()).isFalse();
            assertThatThrownBy(() -> manager.run(transferAndInsert(10, "n2")))
                    .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("increments only")
                    .hasMessageContaining("twoRoundCommit(true)");
            assertThatThrownBy(() -> manager.submit(transfer(5)))
                    .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("submit");
        }
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isZero();
        assertThat(accounts.collection().find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(100L);
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
