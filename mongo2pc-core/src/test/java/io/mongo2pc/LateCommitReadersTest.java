package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A two-round transfer A -> B of 10 whose commit was written after its deadline (stored
 * {@code applied}, {@code insertedAt >= until}): it counts as canceled for every reader that meets
 * its entries, which undo them and never roll it forward. With {@code oneUndone}, the debit's hold
 * was already given back (by a resolver behind a tombstone pruned since): rolling the transfer
 * forward would then credit B money A never paid. The owner's lease is long, so recovery's stale
 * scan leaves the document alone unless a test expires it.
 */
class LateCommitReadersTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TwoAccounts two;
    private TransactionManager other;

    /**
     * Accounts A 100 and B 0, transfer t-1 (A -> B, 10) committed late (by its commit insert, or by
     * round 1's insert and the commit); {@code oneUndone}: A's hold given back.
     */
    private void lateTransfer(boolean oneUndone, boolean commitInsert) {
        String db = mongo.database();
        two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(db, 100L);
        LateCommits.crashAtTheCommit(mongo.client(), db, "t-1", two.a(), two.b(), 10, Duration.ofMinutes(1), commitInsert);
        if (oneUndone) {
            LateCommits.undoPrepare(two.collection(), "A", "t-1");
        }
        LateCommits.rewriteLate(mongo.client(), db, "t-1");
        other = TestManagers.builder(mongo.newClient(), db, "other").finishInBackground(false).sweepPeriod(Duration.ZERO)
                .maxClockSkew(Duration.ofMillis(100)).build();
    }

    @ParameterizedTest(name = "one prepare undone before: {0}, commit insert: {1}")
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void sweep_undoesTheEntriesOfACommitWrittenLate_andRepairsIt(boolean oneUndone, boolean commitInsert) {
        lateTransfer(oneUndone, commitInsert);

        RecoveryReport report = other.recover(Duration.ZERO); // the document is not stale: only the sweep meets it

        assertThat(report.rolledForward()).isZero();
        assertBalances(100, 0);
        assertRepaired();
    }

    @ParameterizedTest(name = "one prepare undone before: {0}, commit insert: {1}")
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void laterTransfer_meetingItsEntries_undoesThem(boolean oneUndone, boolean commitInsert) {
        lateTransfer(oneUndone, commitInsert);

        // All of A's 100: in effect only once the late transfer's hold on A is given back.
        TransactionOutcome outcome = other.run(LateCommits.transfer(two.a(), two.b(), 100));

        assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
        assertThat(balance(other.readCommitted(two.b()))).as("B as committed").isEqualTo(100L);
        other.recover(Duration.ZERO); // what the later transfer did not meet (B's mark when A's hold was undone before)
        assertBalances(0, 100);
        assertRepaired();
    }

    @ParameterizedTest(name = "one prepare undone before: {0}, commit insert: {1}")
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void readCommitted_showsTheValuesBeforeTheTransfer_andRollsNothingForward(boolean oneUndone, boolean commitInsert) throws Exception {
        lateTransfer(oneUndone, commitInsert);

        Optional<Document> a = other.readCommitted(two.a());
        Optional<Document> b = other.readCommitted(two.b());
        List<Optional<Document>> cut = other.readCommitted(List.of(two.a(), two.b()));
        // A committed transaction met by a reader is rolled forward after 200 ms: give it time to act if it would.
        Thread.sleep(1000);

        assertThat(List.of(balance(a), balance(b))).as("one by one").containsExactly(100L, 0L);
        assertThat(List.of(balance(cut.get(0)), balance(cut.get(1)))).as("as one cut").containsExactly(100L, 0L);
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first().getString("state"))
                .as("no reader rolled it forward").isEqualTo("applied");
        other.recover(Duration.ZERO);
        assertBalances(100, 0);
    }

    @ParameterizedTest(name = "one prepare undone before: {0}, commit insert: {1}")
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void recovery_repairsAStaleCommitWrittenLate_undoesIt_andNeverMarksItDone(boolean oneUndone, boolean commitInsert) {
        lateTransfer(oneUndone, commitInsert);
        mongo.expireLeases(mongo.database());

        RecoveryReport report = other.recover(Duration.ZERO);

        assertThat(report.rolledForward()).as("rolled forward").isZero();
        assertThat(report.canceled()).as("canceled by the stale scan").isEqualTo(1);
        assertBalances(100, 0);
        assertRepaired();
    }

    private void assertBalances(long a, long b) {
        MongoCollection<Document> accounts = two.collection();
        assertThat(List.of(stored(accounts, "A"), stored(accounts, "B"))).as("A and B as stored").containsExactly(a, b);
        assertThat(accounts.find(new Document("pendingTransactions.0", new Document("$exists", true))).first())
                .as("a document with markers left").isNull();
    }

    private static void assertRepaired() {
        Document doc = mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
        assertThat(doc.getString("state")).as("stored state").isEqualTo("canceled");
        assertThat(doc.getString("code")).isEqualTo(ReasonCode.TIMED_OUT.name());
    }

    private static long stored(MongoCollection<Document> accounts, String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    private static long balance(Optional<Document> view) {
        return ((Number) view.orElseThrow().get("balance")).longValue();
    }
}
