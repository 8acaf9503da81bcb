package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes applied by the server whose acknowledgement never reaches the client (a proxy drops the
 * reply and closes the connection, as a network failure would). Regression: an update's take
 * (lock and marker) acknowledged late made the retry store the taken copy, marker included, as
 * the before-image, so a cancel put the canceled transaction's marker back on the document for
 * good and every later exclusive operation on it was refused as a conflict.
 */
class LostAcknowledgementTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @ParameterizedTest(name = "debit {0}")
    @ValueSource(longs = {30, 500})
    void lostAckOfAnUpdatesTake_thenCommitOrCancel_leavesTheDocumentAsItShouldBe(long debit) throws Exception {
        String db = mongo.database();
        MongoCollection<Document> orders = mongo.client().getDatabase(db).getCollection("orders");
        orders.insertOne(new Document("_id", "o1").append("state", "UnPaid"));
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()));
        DocumentRef order = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "orders", "o1");
        DocumentRef account = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "accounts", "A");
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            TransactionManager manager = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("app").conflictTimeout(Duration.ofMillis(300)).retryTimeout(Duration.ofSeconds(5))
                    // a write without an answer is retried once its deadline has passed: keep that short
                    .lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100)).build();
            // the first findAndModify on orders is the take of o1: applied, its reply lost
            proxy.dropReplies(1, request -> request.contains("findAndModify") && request.contains("orders"));

            TransactionOutcome outcome = manager.run(List.of(
                    Operation.update(order, new Document("$set", new Document("state", "Paid")), new Document("state", "UnPaid")),
                    Operation.increment(account, "balance", -debit, new Document("balance", new Document("$gte", debit)))));

            assertThat(proxy.dropped.get()).as("one acknowledgement was lost").isEqualTo(1);
            boolean commits = debit <= 100;
            assertThat(outcome.state()).isEqualTo(commits ? TransactionState.DONE : TransactionState.CANCELED);
            Document o1 = orders.find(new Document("_id", "o1")).first();
            assertThat(o1.getString("state")).isEqualTo(commits ? "Paid" : "UnPaid");
            assertThat(o1).doesNotContainKey("_m2pc");
            assertThat(o1.getList("pendingTransactions", Object.class, List.of())).as("markers left on o1").isEmpty();

            TransactionOutcome later = manager.run(List.of(Operation.update(order, new Document("$set", new Document("note", "x")), null)));
            assertThat(later.state()).as("a later update of o1: " + later.reason()).isEqualTo(TransactionState.DONE);
        }
    }

    @Test
    void lostAckOfAClaim_theRetryRunsWhatTheFirstTryClaimed() throws Exception {
        // Regression (found in review): the retried claim claimed the next queued transaction (or
        // none), and the one claimed first sat pending, owned by nobody running it, for a lease.
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        mongo.invariants().expectTotal(db, 100L);
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            TransactionManager manager = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("app").retryTimeout(Duration.ofSeconds(5)).build();
            Object queued = manager.submit(List.of(Operation.increment(a, "balance", -10L, null), Operation.increment(b, "balance", 10L, null)));
            proxy.dropReplies(1, request -> request.contains("findAndModify") && request.contains("initial"));

            Optional<TransactionOutcome> outcome = manager.claimAndRun();

            assertThat(proxy.dropped.get()).as("one acknowledgement was lost").isEqualTo(1);
            assertThat(outcome).as("the one queued transaction, run by this call").isPresent()
                    .hasValueSatisfying(o -> assertThat(o.id()).isEqualTo(queued));
            assertThat(manager.inspect(queued).orElseThrow().state()).isEqualTo(TransactionState.DONE);
        }
    }
}
