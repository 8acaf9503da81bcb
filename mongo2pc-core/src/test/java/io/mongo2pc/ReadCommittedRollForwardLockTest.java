package io.mongo2pc;

import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
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
        Payment pay = Payment.create(mongo, two.a());
        LateCommits.crashAtTheCommit(mongo.client(), db, "p-1", pay.ops(), LEASE, true); // applied in time, nothing released
        Instant until = pay.stored().get("_m2pc", Document.class).getDate("until").toInstant();
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").finishInBackground(false)
                .lease(LEASE).sweepPeriod(Duration.ZERO).build();

        assertThat(other.readCommitted(two.a()).orElseThrow().getLong("balance")).as("A as committed").isEqualTo(90L);
        Document done = awaitDone("p-1");
        Document whenDone = pay.stored();
        assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("the done document pruned: " + done.toJson()).isEqualTo(1L);

        assertThat(other.readCommitted(pay.order()).orElseThrow().getString("state"))
                .as("the order as committed once its transaction is done and pruned (stored when done: " + whenDone.toJson() + ")")
                .isEqualTo("Paid");
        CommitInserts.awaitPast(until, LEASE); // past the lock's deadline plus any skew: the sweep may act on it
        other.recover(Duration.ZERO);
        Document stored = pay.stored();
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
