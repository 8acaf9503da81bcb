package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.LateInsertCopies;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A copy of an insert that the network delivers after its transaction has ended. Regression (found
 * by an independent check): the transaction [insert items/ghost, an increment whose guard never
 * holds] ran with a lease of 1 s and a socket timeout of 300 ms while the network held the insert
 * for 3 s; the owner waited out the insert's deadline, retried, was refused by the guard, undid the
 * insert and canceled; then the held copy created {@code {_m2pc: {tx, kind: insert, until, at},
 * pendingTransactions: [tx], v: 0}}. Read-committed showed it as absent, but a plain find returned
 * it, recovery left it and it kept its marker for good. Recovery now removes what a late copy of an
 * insert leaves once its transaction has ended.
 */
class LateInsertCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void lateCopyOfAnInsert_landingAfterItsTransactionWasCanceled_isRemovedByRecovery() throws Exception {
        String db = mongo.database();
        MongoCollection<Document> items = mongo.client().getDatabase(db).getCollection("items");
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(
                new Document("_id", "A").append("balance", 10L).append("pendingTransactions", List.of()));
        DocumentRef ghost = DocumentRef.of(db, "items", "ghost");
        DocumentRef account = DocumentRef.of(db, "accounts", "A");
        TransactionOutcome outcome = LateInsertCopies.landAfterCancel(mongo.uri(), mongo.client(), db, ghost,
                new Document("v", 0L), account);

        assertThat(items.find(new Document("_id", "ghost")).first()).as("what the late copy created").isNotNull();

        TransactionManager other = TransactionManager.builder().target("default", mongo.newClient()).database(db)
                .application("recoverer").build();
        RecoveryReport report = other.recover();

        assertThat(report.lateInsertsRemoved()).as("the pass says it removed the copy").isEqualTo(1);
        assertThat(report.lateInserts()).containsExactly(new RecoveryReport.LateInsert(ghost, outcome.id()));
        assertThat(items.find(new Document("_id", "ghost")).first()).as("the late copy's document after recovery").isNull();
        assertThat(other.readCommitted(ghost)).isEmpty();
        assertThat(mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", outcome.id()))
                .first().getString("state")).isEqualTo("canceled");
    }
}
