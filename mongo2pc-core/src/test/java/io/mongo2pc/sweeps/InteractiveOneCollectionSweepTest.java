package io.mongo2pc.sweeps;

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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The crash-point sweep on an interactive transfer whose writes are all in one collection (A and B
 * of accounts), so that round 1 sends both takes in one request. In the canceling scenario a
 * unique index on accounts refuses B's take (A's code) while A's, in the same request, applies.
 */
public class InteractiveOneCollectionSweepTest extends CrashPointSweepTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder.lease(LEASE).maxClockSkew(SKEW);
    }

    @Override
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.finishInBackground(false);
    }

    @Override
    protected boolean crashesTwice() {
        return false;
    }

    /** The canceling scenario: two takes, the refused one's undo. */
    @Override
    protected int minPoints(Scenario scenario) {
        return scenario == Scenario.COMMITS ? 10 : 5;
    }

    @Override
    protected void afterCrash(String db) {
        Orphans.expire(mongo.client().getDatabase(db), SKEW);
    }

    @Override
    protected void populate(String db) {
        super.populate(db);
        var accounts = mongo.client().getDatabase(db).getCollection("accounts");
        accounts.updateOne(new Document("_id", "A"), new Document("$set", new Document("code", "a")));
        accounts.updateOne(new Document("_id", "B"), new Document("$set", new Document("code", "b")));
        accounts.createIndex(new Document("code", 1), new com.mongodb.client.model.IndexOptions().unique(true));
    }

    @Override
    protected TransactionOutcome start(String db, Scenario scenario, TransactionManager manager) {
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        TransactionResult<Boolean> result = manager.transact(ctx -> {
            long fromA = ctx.get(a).orElseThrow().getLong("balance");
            long toB = ctx.get(b).orElseThrow().getLong("balance");
            ctx.update(a, new Document("$set", new Document("balance", fromA - 100)));
            Document setB = new Document("balance", toB + 100);
            if (scenario == Scenario.CANCELS) {
                setB.append("code", "a"); // A's: the unique index refuses B's take
            }
            ctx.update(b, new Document("$set", setB));
            return true;
        });
        return result.outcome();
    }

    @Test
    void oneCollection_stopsAtEveryTake() {
        List<CrashPoint> points = pointsReached(Scenario.COMMITS);
        assertThat(points).contains(CrashPoint.before(Step.APPLY, 0), CrashPoint.after(Step.APPLY, 0),
                CrashPoint.before(Step.APPLY, 1), CrashPoint.after(Step.APPLY, 1));
    }
}
