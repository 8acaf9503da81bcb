package io.mongo2pc.regression;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Adversarial review of inserts, updates and deletes under the two-round commit: updates the
 * server refuses only when it applies them. When the change was applied at the release, after the
 * commit point, each of these committed the rest of the transaction and left the document locked
 * for good; now the change is applied before the commit point and a refusal cancels.
 */
class TwoRoundExclusiveReviewTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> docs;

    private static DocumentRef ref(String id) {
        return DocumentRef.of(mongo.database(), "docs", id);
    }

    private static TransactionManager manager() {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("review").twoRoundCommit(true).finishInBackground(false).crashHook(CrashHook.NONE)
                .retryTimeout(Duration.ofSeconds(5)).conflictTimeout(Duration.ofSeconds(2)).build();
    }

    @BeforeEach
    void documents() {
        docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.insertOne(new Document("_id", "order").append("tags", "text").append("paid", 0L));
        docs.insertOne(new Document("_id", "account").append("balance", 100L));
    }

    private Document stored(String id) {
        return docs.find(new Document("_id", id)).first();
    }

    /**
     * Runs {@code bad} with a debit of 30 from the account: refused before anything is written, or
     * canceled, or committed with both in effect; never the debit committed and the update left
     * waiting in a lock no one can release.
     */
    private void runAndExpectNoStuckLock(Operation bad) {
        TransactionOutcome outcome = null;
        try {
            outcome = manager().run(List.of(bad, Operation.increment(ref("account"), "balance", -30L, null)));
        } catch (InvalidTransactionException refused) {
            assertThat(refused.getMessage()).doesNotContain("Exception");
        }
        Document order = stored(bad.document().id().toString());
        boolean debited = stored("account").getLong("balance") == 70L;
        assertThat(order).as("the document is not left locked").doesNotContainKey("_m2pc");
        if (outcome == null) {
            assertThat(debited).as("refused before anything was written").isFalse();
            return;
        }
        assertThat(outcome.state()).as(String.valueOf(outcome.reason()))
                .isEqualTo(debited ? TransactionState.DONE : TransactionState.CANCELED);
    }

    @Test
    void updatePushingToATextField_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$push", new Document("tags", "x")), null));
    }

    @Test
    void updateSettingAPathThroughAText_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$set", new Document("tags.first", "x")), null));
    }

    @Test
    void updateWithConflictingPaths_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$set", new Document("paid", 1L))
                .append("$inc", new Document("paid", 1L)), null));
    }

    @Test
    void updateUnsettingAPathThroughAText_isNoChange_andCommits() {
        TransactionOutcome outcome = manager().run(List.of(Operation.update(ref("order"),
                new Document("$unset", new Document("tags.first", "")).append("$set", new Document("status", "seen")), null)));

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("order")).containsEntry("tags", "text").containsEntry("status", "seen").doesNotContainKey("_m2pc");
    }

    @Test
    void updateIncrementingAnArrayOfNumbers_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        docs.updateOne(new Document("_id", "order"), new Document("$set", new Document("paid", List.of(1L))));
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$inc", new Document("paid", 1L)), null));
    }

    @Test
    void updateOfANumberGuardedWithAnd_keepsItsGuard_noOverdraft() {
        TransactionOutcome outcome = manager().run(List.of(Operation.update(ref("account"),
                new Document("$inc", new Document("balance", -150L)),
                new Document("$and", List.of(new Document("balance", new Document("$gte", 150L)))))));

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.CANCELED);
        assertThat(stored("account")).as("no overdraft").containsEntry("balance", 100L).doesNotContainKey("_m2pc");
    }

    @Test
    void updateIncrementingByText_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$inc", new Document("paid", "five")), null));
    }

    @Test
    void updateSettingTheCurrentDateWithAText_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$currentDate", new Document("at", "yes")), null));
    }

    /**
     * Refusals MongoDB gives when it parses the update (the embedded server lets these two through):
     * under the two-round commit it parses it first at the release, so they are refused up front.
     */
    @Test
    void updatePoppingTwoOrPullingAllOfANumber_isRefusedBeforeAnythingIsWritten() {
        for (Document bad : List.of(new Document("$pop", new Document("list", 2)), new Document("$pullAll", new Document("list", 5)))) {
            assertThatThrownBy(() -> manager().run(List.of(Operation.update(ref("order"), bad, null),
                    Operation.increment(ref("account"), "balance", -30L, null))))
                    .as(bad.toJson()).isInstanceOf(InvalidTransactionException.class);
            assertThat(stored("order")).doesNotContainKey("_m2pc");
            assertThat(stored("account")).containsEntry("balance", 100L);
        }
    }

    @Test
    void updateRenamingToANumber_isRefusedBeforeTheCommitPoint_notStuckAfterIt() {
        runAndExpectNoStuckLock(Operation.update(ref("order"), new Document("$rename", new Document("paid", 5)), null));
    }

    /**
     * A change that a unique index refuses depends on other documents, so no filter on the taken
     * document can check it at the prepare: the server refuses it at the release, after the commit
     * point (under the tutorial's rules the update is applied before the commit point and cancels).
     */
    @Test
    void updateSettingAUniqueFieldTakenByAnotherDocument_isNotCommittedWithoutIt() {
        docs.createIndex(new Document("ref", 1), new com.mongodb.client.model.IndexOptions().unique(true).sparse(true));
        docs.insertOne(new Document("_id", "first").append("ref", "A"));
        docs.insertOne(new Document("_id", "second").append("ref", "B"));
        runAndExpectNoStuckLock(Operation.update(ref("second"), new Document("$set", new Document("ref", "A")), null));
    }
}
