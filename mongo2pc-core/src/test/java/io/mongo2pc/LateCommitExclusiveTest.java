package io.mongo2pc;

import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A payment (an order's update from UnPaid to Paid, with a debit of A) whose commit was written
 * after its deadline: the update is in the stored order since its round 1b, under the lock with
 * its before-image. Counted canceled, the order reads as UnPaid, and whoever meets the lock
 * restores the before-image; rolling it forward would release the lock and keep the change.
 */
class LateCommitExclusiveTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @ParameterizedTest(name = "commit insert: {0}")
    @ValueSource(booleans = {true, false})
    void updateOfACommitWrittenLate_readsAsBefore_andIsRestoredByTheSweep(boolean commitInsert) {
        String db = mongo.database();
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(db, 100L);
        Payment pay = Payment.create(mongo, two.a());
        DocumentRef order = pay.order();
        LateCommits.crashAtTheCommit(mongo.client(), db, "p-1", pay.ops(), Duration.ofMinutes(1), commitInsert);
        assertThat(pay.stored().getString("state")).as("the change, in since round 1b")
                .isEqualTo("Paid");
        LateCommits.rewriteLate(mongo.client(), db, "p-1");
        TransactionManager other = TestManagers.builder(mongo.newClient(), db, "other").finishInBackground(false)
                .sweepPeriod(Duration.ZERO).build();

        assertThat(other.readCommitted(order).orElseThrow().getString("state")).as("the order as committed").isEqualTo("UnPaid");
        other.recover(Duration.ZERO); // not stale: the sweep meets the lock and the hold

        Document stored = pay.stored();
        assertThat(stored.getString("state")).as("the order as stored").isEqualTo("UnPaid");
        assertThat(stored.containsKey("_m2pc")).as("locked: " + stored.toJson()).isFalse();
        assertThat(two.collection().find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(100L);
        assertThat(mongo.transactions(db).find(new Document("_id", "p-1")).first().getString("state")).isEqualTo("canceled");
    }
}
