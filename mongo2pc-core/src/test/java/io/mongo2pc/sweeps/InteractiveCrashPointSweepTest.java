package io.mongo2pc.sweeps;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The crash-point sweep on an interactive transaction: a body that reads A and B, moves 100 from A
 * to B (no guard: its own check), marks X paid and inserts Y. Stopped before and after each of its
 * writes (the takes of round 1, the commit insert, each release and done; in the canceling scenario,
 * where the database refuses Y's insert by a unique index, each undo), then recovered by another
 * instance; and with each acknowledgement lost once: all or nothing, money conserved, nothing of the
 * protocol left.
 */
public class InteractiveCrashPointSweepTest extends CrashPointSweepTest {
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

    /** A second crash during recovery is the commit insert's sweep's (the same writes recover these). */
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
        MongoDatabase database = mongo.client().getDatabase(db);
        database.getCollection("docs").createIndex(new Document("code", 1), new IndexOptions().unique(true));
        database.getCollection("docs").insertOne(new Document("_id", "X").append("status", "new").append("code", "x"));
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

    /** The body; in the canceling scenario Y's code is X's, which the unique index refuses. */
    @Override
    protected TransactionOutcome start(String db, Scenario scenario, TransactionManager manager) {
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        TransactionResult<Boolean> result = manager.transact(ctx -> {
            long fromA = ctx.get(a).orElseThrow().getLong("balance");
            long toB = ctx.get(b).orElseThrow().getLong("balance");
            if (fromA < 100) {
                return false;
            }
            ctx.update(a, new Document("$set", new Document("balance", fromA - 100)));
            ctx.update(b, new Document("$set", new Document("balance", toB + 100)));
            ctx.update(DocumentRef.of(db, "docs", "X"), new Document("$set", new Document("status", "paid")));
            ctx.insert(DocumentRef.of(db, "docs", "Y"), new Document("for", "X").append("code", scenario == Scenario.COMMITS ? "y" : "x"));
            return true;
        });
        return result.outcome();
    }

    @Test
    void interactive_stopsAtEveryWriteOfItsCommit() {
        List<CrashPoint> points = pointsReached(Scenario.COMMITS);
        List<CrashPoint> expected = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            expected.add(CrashPoint.before(Step.APPLY, i));
            expected.add(CrashPoint.after(Step.APPLY, i));
            expected.add(CrashPoint.before(Step.RELEASE, i));
            expected.add(CrashPoint.after(Step.RELEASE, i));
        }
        expected.addAll(List.of(CrashPoint.before(Step.COMMIT, -1), CrashPoint.after(Step.COMMIT, -1),
                CrashPoint.before(Step.FINISH, -1), CrashPoint.after(Step.FINISH, -1)));
        assertThat(points).as("every write of an interactive commit").containsAll(expected);
        assertThat(points).as("one write per document: no round 1b").noneMatch(p -> p.step() == Step.CHANGE);
        assertThat(pointsReached(Scenario.CANCELS)).as("the refusal undoes what round 1 took")
                .contains(CrashPoint.before(Step.UNDO, 0), CrashPoint.after(Step.UNDO, 0));
    }
}
