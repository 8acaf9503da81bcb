package io.mongo2pc;

import io.mongo2pc.testing.LateCommits;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the API says of a two-round transfer A -> B of 10 whose commit was written after its
 * deadline (stored {@code applied}, {@code insertedAt >= until}): canceled, {@code TIMED_OUT}, to
 * {@code awaitOutcome}, to a caller running its id again, to an operator's cancel, to
 * {@code inspect}, {@code list} and {@code counts}. And a commit written in time still counts as
 * committed everywhere.
 */
class LateCommitOutcomesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TwoAccounts two;
    private TransactionManager other;

    private void transferCrashedAtItsCommit(boolean commitInsert) {
        String db = mongo.database();
        two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(db, 100L);
        LateCommits.crashAtTheCommit(mongo.client(), db, "t-1", two.a(), two.b(), 10, Duration.ofMinutes(1), commitInsert);
        other = TestManagers.builder(mongo.newClient(), db, "other").finishInBackground(false).sweepPeriod(Duration.ZERO)
                .maxClockSkew(Duration.ofMillis(100)).build();
    }

    @ParameterizedTest(name = "commit insert: {0}")
    @ValueSource(booleans = {true, false})
    void awaitOutcome_andTheIdRunAgain_sayCanceledTimedOut(boolean commitInsert) {
        transferCrashedAtItsCommit(commitInsert);
        LateCommits.rewriteLate(mongo.client(), mongo.database(), "t-1");

        TransactionOutcome awaited = other.awaitOutcome("t-1", Duration.ofSeconds(5)).orElseThrow();
        TransactionOutcome again = other.run("t-1", LateCommits.transfer(two.a(), two.b(), 10));

        for (TransactionOutcome outcome : List.of(awaited, again)) {
            assertThat(outcome.state()).as(outcome.toString()).isEqualTo(TransactionState.CANCELED);
            assertThat(outcome.reasonCode()).as(outcome.toString()).isEqualTo(ReasonCode.TIMED_OUT);
        }
        finishAndExpect(100, 0);
    }

    @ParameterizedTest(name = "commit insert: {0}")
    @ValueSource(booleans = {true, false})
    void cancel_saysItIsCanceledAlready_repairsIt_andUndoesItsEntries(boolean commitInsert) {
        transferCrashedAtItsCommit(commitInsert);
        LateCommits.rewriteLate(mongo.client(), mongo.database(), "t-1");

        CancelResult result = other.cancel("t-1", "operator");

        assertThat(result.kind()).as(result.toString()).isEqualTo(CancelResult.Kind.ALREADY_CANCELED);
        assertThat(result.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(result.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        Document doc = mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
        assertThat(doc.getString("state")).as("stored state").isEqualTo("canceled");
        assertThat(List.of(stored("A"), stored("B"))).as("undone by the cancel").containsExactly(100L, 0L);
    }

    @ParameterizedTest(name = "commit insert: {0}")
    @ValueSource(booleans = {true, false})
    void inspect_list_andCounts_showItCanceled(boolean commitInsert) {
        transferCrashedAtItsCommit(commitInsert);
        LateCommits.rewriteLate(mongo.client(), mongo.database(), "t-1");

        TransactionView view = other.inspect("t-1").orElseThrow();
        Map<TransactionState, Long> counts = other.counts();
        List<Object> canceled = ids(other.list(TransactionQuery.builder().state(TransactionState.CANCELED).build()));
        List<Object> committed = ids(other.list(TransactionQuery.builder().state(TransactionState.APPLIED)
                .state(TransactionState.DONE).build()));

        assertThat(view.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(view.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        assertThat(view.lateCommit()).isTrue();
        assertThat(view.isCommitted()).isFalse();
        assertThat(view.document().getString("state")).as("the stored document, as is").isEqualTo("applied");
        assertThat(counts.get(TransactionState.APPLIED)).as("applied").isZero();
        assertThat(counts.get(TransactionState.CANCELED)).as("canceled").isEqualTo(1L);
        assertThat(canceled).as("listed canceled").containsExactly("t-1");
        assertThat(committed).as("listed applied or done").isEmpty();
        assertThat(other.oldestOpenTransaction()).as("the oldest open transaction").isEmpty();
        finishAndExpect(100, 0);
    }

    @ParameterizedTest(name = "commit insert: {0}")
    @ValueSource(booleans = {true, false})
    void aCommitWrittenInTime_countsCommittedEverywhere(boolean commitInsert) {
        transferCrashedAtItsCommit(commitInsert);
        LateCommits.rewriteInTime(mongo.client(), mongo.database(), "t-1");

        TransactionView view = other.inspect("t-1").orElseThrow();
        assertThat(view.state()).isEqualTo(TransactionState.APPLIED);
        assertThat(view.lateCommit()).isFalse();
        assertThat(other.counts().get(TransactionState.APPLIED)).isEqualTo(1L);
        assertThat(ids(other.list(TransactionQuery.builder().state(TransactionState.APPLIED).build()))).containsExactly("t-1");
        assertThat(ids(other.list(TransactionQuery.builder().state(TransactionState.CANCELED).build()))).isEmpty();
        assertThat(balance(other.readCommitted(two.a()).orElseThrow())).as("A as committed").isEqualTo(90L);
        assertThat(balance(other.readCommitted(two.b()).orElseThrow())).as("B as committed").isEqualTo(10L);
        assertThat(other.cancel("t-1", "operator").kind()).isEqualTo(CancelResult.Kind.ROLLED_FORWARD);

        mongo.expireLeases(mongo.database());
        RecoveryReport report = other.recover(Duration.ZERO);

        // Rolled forward by this pass, or by the manager's own thread that the reads above handed it
        // to (they met its markers): never canceled, and done soon after.
        assertThat(report.canceled()).as(report.toString()).isZero();
        assertThat(other.awaitOutcome("t-1", Duration.ofSeconds(5)).orElseThrow().isCommitted()).isTrue();
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!"done".equals(mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first().getString("state"))
                && System.nanoTime() < until) {
            other.recover(Duration.ZERO);
            Thread.onSpinWait();
        }
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first().getString("state"))
                .isEqualTo("done");
        assertThat(List.of(stored("A"), stored("B"))).containsExactly(90L, 10L);
    }

    /** Recovery and the sweep finish what is left; then the balances as stored. */
    private void finishAndExpect(long a, long b) {
        mongo.expireLeases(mongo.database());
        other.recover(Duration.ZERO);
        assertThat(List.of(stored("A"), stored("B"))).containsExactly(a, b);
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first().getString("state"))
                .isEqualTo("canceled");
    }

    private static List<Object> ids(TransactionPage page) {
        return page.transactions().stream().map(TransactionView::id).toList();
    }

    private long stored(String id) {
        return two.collection().find(new Document("_id", id)).first().getLong("balance");
    }

    private static long balance(Document view) {
        return ((Number) view.get("balance")).longValue();
    }
}
