package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A reader that meets the marker of a committed two-round transaction hands it to be rolled
 * forward: a transaction whose owner stopped right after its commit point is released and moved to
 * {@code done} by a mere {@code readCommitted} (one document, or a cut), long before its lease
 * would let recovery take it over; one that is not committed is left alone.
 */
class ReadCommittedRollForwardTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** Long enough that nothing but the reader can finish the transaction within the test. */
    private static final Duration LEASE = Duration.ofMinutes(10);

    private TwoAccounts accounts;

    /** Runs a transfer of 30 from A to B whose owner stops at {@code point}; returns its id. */
    private Object ownerStopsAt(CrashPoint point) {
        return ownerStopsAt(point, true);
    }

    /** {@link #ownerStopsAt(CrashPoint)} by an owner with or without the commit insert. */
    private Object ownerStopsAt(CrashPoint point, boolean commitInsert) {
        accounts = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100);
        AtomicReference<Object> id = new AtomicReference<>();
        CrashHook stop = (p, tx) -> {
            id.compareAndSet(null, tx);
            if (p.equals(point)) {
                throw new SimulatedCrash(p, tx);
            }
        };
        TransactionManager owner = TestManagers.crashing(mongo.client(), mongo.database(), "owner", stop)
                .twoRoundCommit(true).commitInsert(commitInsert).finishInBackground(false).lease(LEASE).build();
        assertThatThrownBy(() -> owner.run(List.of(
                Operation.increment(accounts.a(), "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                Operation.increment(accounts.b(), "balance", 30L, null)))).isInstanceOf(SimulatedCrash.class);
        return id.get();
    }

    private TransactionManager reader() {
        return TestManagers.builder(mongo.client(), mongo.database(), "reader").lease(LEASE).build();
    }

    private Document transaction(Object id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions").find(new Document("_id", id)).first();
    }

    private boolean hasMarkers() {
        MongoCollection<Document> coll = accounts.collection();
        return coll.countDocuments(new Document("pendingTransactions.0", new Document("$exists", true))) > 0
                || coll.find().into(new java.util.ArrayList<>()).stream()
                .anyMatch(d -> d.keySet().stream().anyMatch(k -> LibraryFields.entry(k)));
    }

    private void readerRollsForward(Consumer<TransactionManager> read) throws InterruptedException {
        Object id = ownerStopsAt(CrashPoint.after(CrashPoint.Step.COMMIT, -1));
        assertThat(transaction(id).getString("state")).isEqualTo("applied");
        assertThat(hasMarkers()).as("the owner stopped before releasing").isTrue();
        try (TransactionManager reader = reader()) {
            read.accept(reader);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos(); // a failure's timeout, not a measure
            while ((hasMarkers() || !"done".equals(transaction(id).getString("state"))) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }
        assertThat(hasMarkers()).as("markers of the committed transaction left after a reader met them").isFalse();
        assertThat(transaction(id).getString("state")).isEqualTo("done");
        assertThat(transaction(id).getLong("epoch")).as("no takeover: finished under its owner's epoch").isEqualTo(1L);
        assertThat(accounts.collection().find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(70L);
        assertThat(accounts.collection().find(new Document("_id", "B")).first().getLong("balance"))
                .as("the credit applied by the roll forward").isEqualTo(30L);
    }

    @Test
    void readCommitted_ofOneDocument_rollsForwardACommittedTransactionWhoseOwnerStopped() throws InterruptedException {
        readerRollsForward(reader -> assertThat(reader.readCommitted(accounts.b()).orElseThrow().getLong("balance"))
                .as("the committed view, at once").isEqualTo(30L));
    }

    @Test
    void readCommitted_ofACut_rollsForwardACommittedTransactionWhoseOwnerStopped() throws InterruptedException {
        readerRollsForward(reader -> {
            List<java.util.Optional<Document>> cut = reader.readCommitted(List.of(accounts.a(), accounts.b()));
            assertThat(cut.get(0).orElseThrow().getLong("balance") + cut.get(1).orElseThrow().getLong("balance")).isEqualTo(100L);
        });
    }

    @Test
    void readCommitted_leavesATransactionNotCommittedAlone() throws InterruptedException {
        // Round 1 inserts the document pending (no commit insert): a transaction that is there and not committed.
        Object id = ownerStopsAt(CrashPoint.before(CrashPoint.Step.COMMIT, -1), false);
        try (TransactionManager reader = reader()) {
            assertThat(reader.readCommitted(accounts.b()).orElseThrow().getLong("balance")).isEqualTo(0L);
            assertThat(reader.readCommitted(accounts.a()).orElseThrow().getLong("balance")).isEqualTo(100L);
            Thread.sleep(3 * 200); // a few of the roll forward's rounds: nothing may happen to it
            assertThat(transaction(id).getString("state")).isEqualTo("pending");
            assertThat(hasMarkers()).isTrue();
            mongo.expireLeases(mongo.database());
            reader.recover(Duration.ZERO);
        }
        assertThat(transaction(id).getString("state")).as("recovery, past the lease, rolls it forward").isEqualTo("done");
        assertThat(hasMarkers()).isFalse();
    }
}
