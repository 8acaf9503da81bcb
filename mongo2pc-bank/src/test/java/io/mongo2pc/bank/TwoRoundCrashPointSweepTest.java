package io.mongo2pc.bank;

import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionState;
import io.mongo2pc.sweeps.Orphans;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The crash sweep of {@link CrashPointSweepTest} (transfers in the tutorial's shape) on the
 * two-round commit: a crash before and after each write of round 1 (prepares landed and the
 * insert not: prepares without a transaction document, resolved by the sweep with a tombstone
 * once past their deadline), the commit, each release and done, the cancel and each undo, and a
 * second crash in the recovery, resolver included. Also a transaction over two collections
 * stopped with the first collection's prepares landed and the second's not sent, resolved once
 * their deadline has passed by the clock.
 */
class TwoRoundCrashPointSweepTest extends CrashPointSweepTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return super.configure(builder).lease(LEASE).maxClockSkew(SKEW);
    }

    /** The library's default rules (the two-round commit for transfers), finished inline so that a crash stops the caller. */
    @Override
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.finishInBackground(false);
    }

    /**
     * Prepares without a transaction document are resolved once the server's clock is past their
     * deadline plus the skew: their deadlines move into the past instead of being waited out
     * (seconds for each of hundreds of rounds); the two-collection case below waits them out.
     */
    @Override
    protected void afterCrash(String db) {
        Orphans.expire(mongo.client().getDatabase(db), SKEW);
    }

    @Test
    void twoCollections_crashWithSomePreparesLanded_theSweepUndoesThem() {
        int stopped = 0;
        for (CrashPoint point : List.of(CrashPoint.before(CrashPoint.Step.APPLY, 1), CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
            String db = freshDatabase();
            mongo.client().getDatabase(db).getCollection("savings").insertOne(new Document("_id", "S").append("balance", 0L)
                    .append("pendingTransactions", List.of()));
            List<Object> ids = new ArrayList<>();
            CrashHook crash = (p, id) -> {
                if (id != null && !ids.contains(id)) {
                    ids.add(id);
                }
                if (p.equals(point)) {
                    throw new SimulatedCrash(p, id);
                }
            };
            TransactionManager owner = configure(TransactionManager.builder().target("default", mongo.client())
                    .database(db).application("owner").crashHook(crash)).build();
            assertThatThrownBy(() -> owner.run(List.of(
                    Operation.increment(DocumentRef.of(db, "accounts", "A"), "balance", -100L,
                            new Document("balance", new Document("$gte", 100L))),
                    Operation.increment(DocumentRef.of(db, "savings", "S"), "balance", 100L, null))))
                    .isInstanceOf(SimulatedCrash.class);
            Document a = mongo.client().getDatabase(db).getCollection("accounts").find(new Document("_id", "A")).first();
            Document s = mongo.client().getDatabase(db).getCollection("savings").find(new Document("_id", "S")).first();
            assertThat(a.getLong("balance")).as(point + ": the debit's hold landed").isEqualTo(900L);
            assertThat(s.getList("pendingTransactions", Object.class)).as(point + ": the credit's mark")
                    .hasSize(point.step() == CrashPoint.Step.APPLY ? 0 : 1);
            assertThat(mongo.client().getDatabase(db).getCollection("transactions").countDocuments()).isZero();

            Orphans.awaitResolvable(mongo.client().getDatabase(db), SKEW); // the real deadline, not moved
            TransactionManager other = configure(TransactionManager.builder().target("default", second())
                    .database(db).application("recoverer")).build();
            other.recover(Duration.ZERO);

            a = mongo.client().getDatabase(db).getCollection("accounts").find(new Document("_id", "A")).first();
            s = mongo.client().getDatabase(db).getCollection("savings").find(new Document("_id", "S")).first();
            assertThat(List.of(a.getLong("balance"), s.getLong("balance"))).as(point + " then the sweep").containsExactly(1000L, 0L);
            assertThat(a.getList("pendingTransactions", Object.class)).isEmpty();
            assertThat(s.getList("pendingTransactions", Object.class)).isEmpty();
            assertThat(a.keySet()).noneMatch(k -> LibraryFields.entry(k));
            Document tombstone = mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", ids.get(0))).first();
            assertThat(tombstone.getString("state")).isEqualTo(TransactionState.CANCELED.stored());
            assertThat(tombstone.getBoolean("tombstone")).isTrue();
            stopped++;
            mongo.client().getDatabase(db).drop();
        }
        assertThat(stopped).isEqualTo(2);
    }
}
