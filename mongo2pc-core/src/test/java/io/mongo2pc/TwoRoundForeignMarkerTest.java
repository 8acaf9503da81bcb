package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Binary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that follows the tutorial by hand names its transactions as it likes, e.g. by a
 * UUID (a binary id): its markers sit on the same accounts as the two-round commit's. A two-round
 * entry can only be named after an ObjectId, a string or a whole number, so meeting such a marker
 * must mean "a transaction of the tutorial's rules, not ours to judge", never an error.
 */
class TwoRoundForeignMarkerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void markerOfATutorialTransactionWithABinaryId_neitherStopsTheSweepNorAWriterThatMeetsIt() {
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        Binary byHand = new Binary((byte) 4, new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        accounts.insertMany(List.of(new Document("_id", "A").append("balance", 5L).append("pendingTransactions", List.of(byHand)),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        MongoCollection<Document> transactions = mongo.client().getDatabase(db).getCollection("transactions");
        transactions.insertOne(new Document("_id", byHand).append("state", "pending").append("lastModified", new Date()));
        TransactionManager manager = TransactionManager.builder().target("default", mongo.client()).database(db)
                .application("two-round").twoRoundCommit(true).build();
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");

        // Refused on A (5 < 10): the writer reads A and resolves what it can there.
        TransactionOutcome outcome = manager.run(List.of(
                Operation.increment(a, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(b, "balance", 10L, null)));
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
        // The sweep reads A too (the collection is recorded by the transfer above).
        RecoveryReport report = manager.recover(Duration.ofHours(1));
        assertThat(report.failed()).isZero();

        // The by-hand transaction is not this test's: end it so that the invariants judge the rest.
        accounts.updateOne(new Document("_id", "A"), new Document("$pull", new Document("pendingTransactions", byHand)));
        transactions.deleteOne(new Document("_id", byHand));
    }
}
