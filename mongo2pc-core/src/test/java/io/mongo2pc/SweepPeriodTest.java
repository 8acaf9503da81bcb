package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code sweepPeriod}: a manager's {@code recover} sweeps the participant collections for markers
 * without a transaction document at most once per period (its first {@code recover} always does);
 * the default period is the lease.
 */
class SweepPeriodTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final Duration SKEW = Duration.ofMillis(200);

    private TransactionManagerBuilder builder(String application) {
        return TestManagers.builder(mongo.newClient(), mongo.database(), application).lease(LEASE).maxClockSkew(SKEW);
    }

    private long heldBalance(MongoCollection<Document> accounts) {
        return accounts.find(new Document("_id", "A")).first().getLong("balance");
    }

    @Test
    void recover_sweepsAtMostOncePerPeriod_andTheDefaultPeriodIsTheLease() throws InterruptedException {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100);
        // An orphan: the owner stops after its prepares, before its transaction document is written.
        TransactionManager owner = TestManagers.crashing(mongo.client(), mongo.database(), "owner", (point, id) -> {
            if (TestManagers.beforeTheDocument(point)) {
                throw new SimulatedCrash(point, id);
            }
        }).twoRoundCommit(true).lease(LEASE).maxClockSkew(SKEW).build();
        assertThatThrownBy(() -> owner.run(List.of(
                Operation.increment(two.a(), "balance", -100L, new Document("balance", new Document("$gte", 100L))),
                Operation.increment(two.b(), "balance", 100L, null)))).isInstanceOf(SimulatedCrash.class);
        assertThat(heldBalance(two.collection())).as("the orphan's hold").isZero();

        TransactionManager hourly = builder("hourly").sweepPeriod(Duration.ofHours(1)).build();
        TransactionManager byLease = builder("by-lease").build();
        assertThat(byLease.settings().sweepPeriod()).isEqualTo(LEASE);
        // Each one's first recover sweeps, before the orphan's deadline: nothing can be resolved yet.
        hourly.recover(Duration.ZERO);
        byLease.recover(Duration.ZERO);
        assertThat(heldBalance(two.collection())).isZero();

        // Past the orphan's deadline plus the skew (the embedded server's clock is this host's), and past one lease.
        Thread.sleep(LEASE.plus(SKEW).plusMillis(300).toMillis());
        hourly.recover(Duration.ZERO);
        assertThat(heldBalance(two.collection())).as("no sweep within the hour since the last one").isZero();
        byLease.recover(Duration.ZERO);
        assertThat(heldBalance(two.collection())).as("swept again once a lease had passed: the hold given back").isEqualTo(100L);
        assertThat(two.collection().find(new Document("pendingTransactions.0", new Document("$exists", true))).first()).isNull();
    }

    @Test
    void sweepPeriod_outOfRange_isRefusedWithTheValue() {
        assertThat(builder("zero").sweepPeriod(Duration.ZERO).build().settings().sweepPeriod()).isEqualTo(Duration.ZERO);
        assertThatThrownBy(() -> builder("negative").sweepPeriod(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sweepPeriod").hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> builder("long").sweepPeriod(Duration.ofDays(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sweepPeriod");
        assertThatThrownBy(() -> builder("null").sweepPeriod(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
