package io.mongo2pc.sweeps;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testing.Transfers;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Core's crash-point sweep on the library's default rules, whose two-round commit writes its
 * transaction document once, at the commit point (the commit insert, docs/COMMIT-INSERT.md), with
 * a transaction of every kind of prepare: a transfer of 100 from A to B (two increments), an update
 * of X (its take, then round 1b's change) and an insert of Y. Stopped before and after each
 * prepare (so with some prepares landed and the others not, and with no transaction document: the
 * sweep moves their deadline into the past, then recovery resolves them behind a tombstone as once
 * past their deadline plus the skew), each change, the commit insert, each release and done; the
 * canceling scenario (B's guard refuses) falls back to the pending document and cancels. Then recovered by another instance, and with each
 * acknowledgement lost once: all or nothing, money conserved, nothing of the protocol left.
 */
public class CommitInsertCrashPointSweepTest extends CrashPointSweepTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder.lease(LEASE).maxClockSkew(SKEW);
    }

    /** The library's default rules, finished inline so that a crash stops the caller. */
    @Override
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.finishInBackground(false);
    }

    /**
     * The bank's sweeps crash twice on these rules (a transfer; an update, a debit and an insert).
     */
    @Override
    protected boolean crashesTwice() {
        return false;
    }

    @Override
    protected void afterCrash(String db) {
        Orphans.expire(mongo.client().getDatabase(db), SKEW);
    }

    @Override
    protected void populate(String db) {
        super.populate(db);
        mongo.client().getDatabase(db).getCollection("docs").insertOne(new Document("_id", "X").append("status", "new"));
    }

    @Override
    protected List<Object> observed(String db) {
        List<Object> observed = new ArrayList<>(super.observed(db));
        var docs = mongo.client().getDatabase(db).getCollection("docs");
        observed.add(docs.find(new Document("_id", "X")).first().getString("status"));
        observed.add(docs.find(new Document("_id", "Y")).first() != null);
        return observed;
    }

    @Override
    protected List<Object> expected(Scenario scenario, boolean done) {
        List<Object> expected = new ArrayList<>(super.expected(scenario, done));
        expected.add(done ? "paid" : "new");
        expected.add(done);
        return expected;
    }

    @Override
    protected List<String> collections() {
        return List.of("accounts", "docs");
    }

    /** The transfer, the update of X and the insert of Y; the canceling scenario's credit of B has a guard that fails. */
    @Override
    protected TransactionOutcome start(String db, Scenario scenario, TransactionManager manager) {
        List<Operation> ops = new ArrayList<>(Transfers.of(db, "A", "B", 100L));
        if (scenario == Scenario.CANCELS) {
            ops.set(1, Operation.increment(DocumentRef.of(db, "accounts", "B"), "balance", 100L,
                    new Document("balance", new Document("$lt", 0L))));
        }
        ops.add(Operation.update(DocumentRef.of(db, "docs", "X"), new Document("$set", new Document("status", "paid")), null));
        ops.add(Operation.insert(DocumentRef.of(db, "docs", "Y"), new Document("for", "X")));
        return manager.run(ops);
    }

    @Test
    void defaultRules_runTheCommitInsert_andStopAtEveryWriteOfIt() {
        List<CrashPoint> points = pointsReached(Scenario.COMMITS);
        List<CrashPoint> expected = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            expected.add(CrashPoint.before(Step.APPLY, i));
            expected.add(CrashPoint.after(Step.APPLY, i));
            expected.add(CrashPoint.before(Step.RELEASE, i));
            expected.add(CrashPoint.after(Step.RELEASE, i));
        }
        expected.addAll(List.of(CrashPoint.before(Step.CHANGE, 2), CrashPoint.after(Step.CHANGE, 2),
                CrashPoint.before(Step.COMMIT, -1), CrashPoint.after(Step.COMMIT, -1),
                CrashPoint.before(Step.FINISH, -1), CrashPoint.after(Step.FINISH, -1)));
        assertThat(points).as("every write of the commit insert's path").containsAll(expected);
        assertThat(points).as("no pending document: the commit is the document's first write")
                .noneMatch(p -> p.step() == Step.INSERT);
        assertThat(points.indexOf(CrashPoint.before(Step.COMMIT, -1))).as("the commit insert after every prepare and change")
                .isGreaterThan(points.indexOf(CrashPoint.after(Step.CHANGE, 2)))
                .isGreaterThan(points.indexOf(CrashPoint.after(Step.APPLY, 3)));
    }
}
