package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The crash points a transaction reaches, in order, name the writes the protocol makes: each
 * transition brings its own step, so a transition paired with the wrong step (or a write that
 * lost its crash points) shows here, where a sweep over whatever points are reached would not
 * notice.
 */
class CrashPointOrderTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private final List<String> reached = new CopyOnWriteArrayList<>();
    private final CrashHook recording = (point, id) -> reached.add(point.toString());

    private TransactionManager manager(String application, CrashHook hook) {
        return TestManagers.builder(mongo.client(), mongo.database(), application).twoRoundCommit(false).finishInBackground(false).crashHook(hook).build();
    }

    private List<Operation> transfer(long amount) {
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", 100L), new Document("_id", "B").append("balance", 0L)));
        return List.of(
                Operation.increment(DocumentRef.of(db, "accounts", "A"), "balance", -amount,
                        new Document("balance", new Document("$gte", amount))),
                Operation.increment(DocumentRef.of(db, "accounts", "B"), "balance", amount, null));
    }

    @Test
    void committedTransfer_reachesInsertApplyCommitReleaseFinish_inThatOrder() {
        TransactionOutcome outcome = manager("order", recording).run(transfer(30L));

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(reached).containsExactly("before-insert", "after-insert",
                "before-apply[0]", "after-apply[0]", "before-apply[1]", "after-apply[1]",
                "before-commit", "after-commit",
                "before-release[0]", "before-release[1]", "after-release[0]", "after-release[1]",
                "before-finish", "after-finish");
    }

    @Test
    void refusedTransfer_reachesBeginCancelUndoFinishCancel_inThatOrder() {
        List<Operation> ops = transfer(500L);

        TransactionOutcome outcome = manager("order", recording).run(List.of(ops.get(1), ops.get(0)));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(reached).containsExactly("before-insert", "after-insert",
                "before-apply[0]", "after-apply[0]", "before-apply[1]", "after-apply[1]",
                "before-begin_cancel", "after-begin_cancel",
                "before-undo[1]", "after-undo[1]", "before-undo[0]", "after-undo[0]",
                "before-finish_cancel", "after-finish_cancel");
    }

    @Test
    void queuedTransfer_isClaimedFirst() {
        TransactionManager manager = manager("order", recording);
        manager.submit(transfer(30L));

        assertThat(manager.claimAndRun()).hasValueSatisfying(o -> assertThat(o.state()).isEqualTo(TransactionState.DONE));
        assertThat(reached.subList(0, 4)).containsExactly("before-insert", "after-insert", "before-claim", "after-claim");
        assertThat(reached.get(4)).isEqualTo("before-apply[0]");
    }

    @Test
    void takenOverTransfer_reachesTakeoverThenFinishesWhereTheOwnerStopped() {
        CrashHook crashAfterCommit = (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new SimulatedCrash(point, id);
            }
        };
        List<Operation> ops = transfer(30L);
        assertThatThrownBy(() -> manager("dies", crashAfterCommit).run(ops)).isInstanceOf(SimulatedCrash.class);
        mongo.expireLeases(mongo.database());

        RecoveryReport report = manager("recoverer", recording).recover(Duration.ZERO);

        assertThat(report.rolledForward()).isEqualTo(1);
        assertThat(reached).containsExactly("before-takeover", "after-takeover",
                "before-release[0]", "before-release[1]", "after-release[0]", "after-release[1]",
                "before-finish", "after-finish");
    }
}
