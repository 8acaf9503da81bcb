package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A payment (an order's update from UnPaid to Paid, with a debit of A) committed by its commit
 * insert, its owner dead before any release. A reader meets the debit's entry and its roll forward
 * ({@code RollForward}) finishes the transaction. {@code done} must mean that nothing of it is left,
 * the order's lock included: prune deletes done documents, and a lock naming a transaction that
 * has no document reads as not committed (the order as its before-image) and is undone by the
 * sweep behind a tombstone (the order restored to UnPaid, the debit kept: money taken for an
 * order left unpaid).
 */
class ReadCommittedRollForwardLockTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(2);

    @Test
    void readCommittedRollForward_ofAPaymentWhoseOwnerDied_releasesTheOrdersLockBeforeDone_soPruneAndTheSweepNeverUndoIt() {
        String db = mongo.database();
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(db, 90L);
        MongoCollection<Document> orders = mongo.client().getDatabase(db).getCollection("orders");
        orders.insertOne(new Document("_id", "o1").append("state", "UnPaid").append("total", 10L));
        DocumentRef order = DocumentRef.of(db, "orders", "o1");
        List<Operation> pay = List.of(
                Operation.update(order, new Document("$set", new Document("state", "Paid")), new Document("state", "UnPaid")),
                Operation.increment(two.a(), "balance", -10L, new Document("balance", new Document("$gte", 10L))));
        LateCommits.crashAtTheCommit(mongo.client(), db, "p-1", pay, LEASE, true); // applied in time, nothing released
        Instant until = orders.find(new Document("_id", "o1")).first().get("_m2pc", Document.class).getDate("until").toInstant();
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").finishInBackground(false)
                .lease(LEASE).sweepPeriod(Duration.ZERO).build();

        assertThat(other.readCommitted(two.a()).orElseThrow().getLong("balance")).as("A as committed").isEqualTo(90L);
        Document done = awaitDone("p-1");
        Document whenDone = orders.find(new Document("_id", "o1")).first();
        assertThat(other.prune(Duration.ZERO)).as("the done document pruned: " + done.toJson()).isEqualTo(1L);

        assertThat(other.readCommitted(order).orElseThrow().getString("state"))
                .as("the order as committed once its transaction is done and pruned (stored when done: " + whenDone.toJson() + ")")
                .isEqualTo("Paid");
        CommitInserts.awaitPast(until, LEASE); // past the lock's deadline plus any skew: the sweep may act on it
        other.recover(Duration.ZERO);
        Document stored = orders.find(new Document("_id", "o1")).first();
        assertThat(stored.getString("state")).as("the order as stored after the sweep: " + stored.toJson()).isEqualTo("Paid");
        assertThat(stored.containsKey("_m2pc")).as("locked: " + stored.toJson()).isFalse();
        assertThat(two.settledBalances()).as("the debit kept").containsExactly(90L, 0L);
    }

    private static Document awaitDone(Object id) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Document doc;
        while (!"done".equals((doc = mongo.transactions(mongo.database()).find(new Document("_id", id)).first()).getString("state"))
                && System.nanoTime() < giveUp) {
            CommitInserts.sleep(20);
        }
        assertThat(doc.getString("state")).as("rolled forward by the reader: " + doc.toJson()).isEqualTo("done");
        return doc;
    }
}
