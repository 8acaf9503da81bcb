package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Inserts, updates, deletes and queued transactions under the two-round commit: one locking write
 * per operation in round 1, an update's change (with its before-image) in round 1b before the commit
 * point; what plain reads and readCommitted show before the commit point; cancel, recovery of a
 * crashed owner, a worker's claim.
 */
class TwoRoundExclusiveTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> docs;
    private DocumentRef order;
    private DocumentRef gone;
    private DocumentRef created;

    private static DocumentRef ref(String id) {
        return DocumentRef.of(mongo.database(), "docs", id);
    }

    private static TransactionManager manager(CrashHook hook) {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("two-round").twoRoundCommit(true).finishInBackground(false).crashHook(hook).build();
    }

    @BeforeEach
    void documents() {
        order = ref("order");
        gone = ref("gone");
        created = ref("created");
        docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.insertOne(new Document("_id", "order").append("status", "open").append("paid", 0L));
        docs.insertOne(new Document("_id", "gone").append("note", "delete me"));
    }

    private List<Operation> three() {
        return List.of(Operation.update(order, new Document("$set", new Document("status", "paid")).append("$inc", new Document("paid", 5L)),
                        new Document("status", "open")),
                Operation.delete(gone, null),
                Operation.insert(created, new Document("amount", 5L)));
    }

    private Document stored(String id) {
        return docs.find(new Document("_id", id)).first();
    }

    @Test
    void insertUpdateDelete_commitTogether_andLeaveNoLock() {
        TransactionOutcome outcome = manager(CrashHook.NONE).run(three());

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("order")).containsEntry("status", "paid").containsEntry("paid", 5L).doesNotContainKey("_m2pc")
                .doesNotContainKey("pendingTransactions");
        assertThat(stored("gone")).isNull();
        assertThat(stored("created")).containsEntry("amount", 5L).doesNotContainKey("_m2pc").doesNotContainKey("pendingTransactions");
    }

    @Test
    void finishInBackground_returnsAtTheCommitPoint_andTheFinisherReleasesTheLocks() {
        TransactionManager manager = TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("two-round").twoRoundCommit(true).finishInBackground(true).build();

        TransactionOutcome outcome = manager.run(three());

        assertThat(outcome.isCommitted()).as(String.valueOf(outcome.reason())).isTrue();
        assertThat(manager.readCommitted(order).orElseThrow()).containsEntry("status", "paid");
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
        assertThat(stored("order")).containsEntry("status", "paid").containsEntry("paid", 5L).doesNotContainKey("_m2pc");
        assertThat(stored("gone")).isNull();
        assertThat(stored("created")).doesNotContainKey("_m2pc");
        assertThat(mongo.transactions(mongo.database()).find().first().getString("state")).isEqualTo("done");
        manager.close();
    }

    @Test
    void beforeTheCommitPoint_readCommittedShowsNoChange_plainReadsOnlyTheUpdatesChange() {
        TransactionManager reader = manager(CrashHook.NONE);
        List<Object> seen = new ArrayList<>();
        CrashHook look = (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                // every prepare has landed: the update's change is stored (round 1b), its before-image in
                // its lock; the delete's document stays
                assertThat(stored("order")).containsEntry("status", "paid").containsEntry("paid", 5L).containsKey("_m2pc");
                assertThat(stored("order").get("_m2pc", Document.class).get("undo", Document.class))
                        .containsEntry("status", "open").containsEntry("paid", 0L);
                assertThat(stored("gone")).isNotNull();
                assertThat(stored("created")).as("the insert's document exists, locked").containsKey("_m2pc");
                seen.add(reader.readCommitted(order).orElseThrow().get("status"));
                seen.add(reader.readCommitted(gone).isPresent());
                seen.add(reader.readCommitted(created).isPresent());
                List<Optional<Document>> cut = reader.readCommitted(List.of(order, gone, created));
                seen.add(cut.get(0).orElseThrow().get("status"));
                seen.add(cut.get(1).isPresent());
                seen.add(cut.get(2).isPresent());
            }
        };
        assertThat(manager(look).run(three()).state()).isEqualTo(TransactionState.DONE);
        assertThat(seen).containsExactly("open", true, false, "open", true, false);
    }

    @Test
    void committedNotReleased_readCommittedShowsTheCommittedContent_andRecoveryReleases() {
        CrashHook dieAfterCommit = (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        assertThatThrownBy(() -> manager(dieAfterCommit).run(three())).hasMessageContaining("process ends");
        assertThat(stored("order")).containsEntry("status", "paid").containsKey("_m2pc");
        TransactionManager reader = TransactionManager.builder().target("default", mongo.client())
                .database(mongo.database()).application("tutorial-rules").build();

        List<Optional<Document>> cut = reader.readCommitted(List.of(order, gone, created));

        assertThat(cut.get(0).orElseThrow()).containsEntry("status", "paid").containsEntry("paid", 5L).doesNotContainKey("_m2pc");
        assertThat(cut.get(1)).isEmpty();
        assertThat(cut.get(2).orElseThrow()).containsEntry("amount", 5L).doesNotContainKey("_m2pc");
        assertThat(reader.readCommitted(order).orElseThrow()).containsEntry("status", "paid");
        mongo.expireLeases(mongo.database());
        reader.recover(Duration.ZERO);
        assertThat(stored("order")).containsEntry("status", "paid").containsEntry("paid", 5L).doesNotContainKey("_m2pc");
        assertThat(stored("gone")).isNull();
        assertThat(stored("created")).doesNotContainKey("_m2pc");
        assertThat(mongo.transactions(mongo.database()).find().first().getString("state")).isEqualTo("done");
    }

    @Test
    void refusedUpdate_cancels_andUndoesTheInsertAndTheTakes() {
        docs.updateOne(new Document("_id", "order"), new Document("$set", new Document("status", "shipped")));

        TransactionOutcome outcome = manager(CrashHook.NONE).run(three());

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(stored("order")).containsEntry("status", "shipped").doesNotContainKey("_m2pc");
        assertThat(stored("gone")).containsEntry("note", "delete me").doesNotContainKey("_m2pc");
        assertThat(stored("created")).isNull();
    }

    @Test
    void incOfATextField_isRefusedBeforeTheCommitPoint() {
        docs.updateOne(new Document("_id", "order"), new Document("$set", new Document("paid", "five")));

        TransactionOutcome outcome = manager(CrashHook.NONE).run(three());

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("refused the update of").contains("non-numeric");
        assertThat(stored("order")).containsEntry("paid", "five").doesNotContainKey("_m2pc");
        assertThat(stored("created")).isNull();
    }

    @Test
    void submitted_isClaimedAndRunByTheTwoRoundRules() {
        TransactionManager manager = manager(CrashHook.NONE);
        Object id = manager.submit(three());
        Document queued = mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
        assertThat(queued).containsEntry("state", "initial").containsEntry("protocol", 2);

        TransactionOutcome outcome = TransactionManager.builder().target("default", mongo.client())
                .database(mongo.database()).application("worker").finishInBackground(false).build().claimAndRun().orElseThrow();

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        Document done = mongo.transactions(mongo.database()).find(new Document("_id", id)).first();
        assertThat(done).containsEntry("application", "worker").containsEntry("protocol", 2);
        assertThat(stored("order")).containsEntry("status", "paid");
        assertThat(stored("gone")).isNull();
        assertThat(stored("created")).containsEntry("amount", 5L);
    }

    @Test
    void badInput_anUpdateOfTheLibrarysLockOrMarkers_isRefusedAndChangesNothing() {
        TransactionManager manager = manager(CrashHook.NONE);
        for (Document update : List.of(new Document("$set", new Document("_m2pc.tx", 1)),
                new Document("$unset", new Document("pendingTransactions", "")),
                new Document("status", "paid").append("_m2pc", new Document("tx", 1)))) {
            assertThatThrownBy(() -> manager.run(List.of(Operation.update(order, update, null), Operation.delete(gone, null))))
                    .as(update.toJson()).isInstanceOf(InvalidTransactionException.class).hasMessageContaining("reserved")
                    .hasMessageNotContaining("Exception");
        }
        assertThat(stored("order")).isEqualTo(new Document("_id", "order").append("status", "open").append("paid", 0L));
        assertThat(stored("gone")).doesNotContainKey("_m2pc");
        assertThat(mongo.transactions(mongo.database()).countDocuments()).isZero();
    }

    /** A two-round take stays its owner's: a tutorial-rules writer waits for it (then cancels) and never takes it for its own. */
    @Test
    void mixedRules_aTutorialRulesUpdateMeetsATwoRoundLock_waitsAndCancels_theLockIsResolvedByItsDeadline() {
        Duration lease = Duration.ofSeconds(1);
        Duration skew = Duration.ofMillis(100);
        CrashHook dieBeforeInsert = (point, id) -> {
            if (TestManagers.beforeTheDocument(point)) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        TransactionManager twoRound = TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("two-round").twoRoundCommit(true).lease(lease).maxClockSkew(skew).crashHook(dieBeforeInsert).build();
        assertThatThrownBy(() -> twoRound.run("same-id", three())).hasMessageContaining("process ends");
        // a crash in round 1 lets what was sent land first (RoundOne): the takes are there
        Document lock = stored("order").get("_m2pc", Document.class);
        assertThat(lock).as("the two-round take landed").containsEntry("tx", "same-id").containsKey("n").containsKey("undo");

        TransactionManager tutorialRules = TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("tutorial-rules").conflictTimeout(Duration.ofMillis(300)).lease(lease).maxClockSkew(skew).build();
        TransactionOutcome outcome = tutorialRules.run("same-id", List.of(
                Operation.update(order, new Document("$set", new Document("status", "closed")), null)));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.CONFLICT);
        // the two-round update's change (round 1b) is stored, its before-image in the lock
        assertThat(stored("order")).as("the two-round lock is not the tutorial-rules transaction's to undo")
                .containsEntry("status", "paid").containsEntry("_m2pc", lock);
        // Past the two-round deadline plus the skew, the sweep finds the id's document under another
        // nonce (the tutorial-rules one) and undoes the take and the insert.
        sleepPast(lock.getDate("until").toInstant().plus(skew));
        tutorialRules.recover(Duration.ZERO);
        assertThat(stored("order")).isEqualTo(new Document("_id", "order").append("status", "open").append("paid", 0L));
        assertThat(stored("gone")).doesNotContainKey("_m2pc");
        assertThat(stored("created")).isNull();
    }

    private static void sleepPast(java.time.Instant instant) {
        long millis = Duration.between(java.time.Instant.now(), instant).toMillis() + 50; // the embedded server's clock is this host's
        if (millis > 0) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
