package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
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
 * Round 1b of an update under the two-round commit: the take locks, a second write before the
 * commit point applies the change and stores the before-image. An update the server refuses only
 * when it applies it (a unique index, a type error) cancels the whole transaction; an owner that
 * dies around that write is recovered by another manager; readers show the before-image until the
 * commit point and the change from it on.
 */
class TwoRoundExclusiveChangeTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> users;
    private TwoAccounts accounts;
    private DocumentRef ann;
    private DocumentRef created;

    @BeforeEach
    void documents() {
        accounts = TwoAccounts.create(mongo, 100, 0);
        users = mongo.client().getDatabase(mongo.database()).getCollection("users");
        users.createIndex(new Document("email", 1), new IndexOptions().unique(true));
        users.insertOne(new Document("_id", "ann").append("email", "ann@example.com").append("tags", "vip"));
        users.insertOne(new Document("_id", "bob").append("email", "bob@example.com"));
        ann = DocumentRef.of(mongo.database(), "users", "ann");
        created = DocumentRef.of(mongo.database(), "users", "new");
    }

    private static TransactionManager manager(CrashHook hook) {
        return builder(hook).build();
    }

    /**
     * A manager whose round 1 also inserts the document pending (no commit insert): an owner that
     * dies before its commit leaves a document recovery can take over and commit.
     */
    private static TransactionManager pendingInsert(CrashHook hook) {
        return builder(hook).commitInsert(false).build();
    }

    private static TransactionManagerBuilder builder(CrashHook hook) {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("round-1b").twoRoundCommit(true).finishInBackground(false).crashHook(hook);
    }

    /** A transfer of 30 from A to B, an insert, and {@code update} of ann. */
    private List<Operation> withUpdate(Document update) {
        return List.of(Operation.increment(accounts.a(), "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                Operation.increment(accounts.b(), "balance", 30L, null),
                Operation.insert(created, new Document("email", "new@example.com")),
                Operation.update(ann, update, null));
    }

    private Document stored(String id) {
        return users.find(new Document("_id", id)).first();
    }

    private Document account(String id) {
        return accounts.collection().find(new Document("_id", id)).first();
    }

    private void assertNothingInEffectNothingLocked() {
        assertThat(account("A")).containsEntry("balance", 100L).containsEntry("pendingTransactions", List.of());
        assertThat(account("A").keySet()).noneMatch(k -> LibraryFields.leftover(k));
        assertThat(account("B")).containsEntry("balance", 0L).containsEntry("pendingTransactions", List.of());
        assertThat(account("B").keySet()).noneMatch(k -> LibraryFields.leftover(k));
        assertThat(stored("ann")).isEqualTo(new Document("_id", "ann").append("email", "ann@example.com").append("tags", "vip"));
        assertThat(stored("new")).isNull();
    }

    @Test
    void updateViolatingAUniqueIndex_cancelsTheWholeTransaction_nothingInEffectNothingLocked() {
        TransactionOutcome outcome = manager(CrashHook.NONE).run(withUpdate(new Document("$set", new Document("email", "bob@example.com"))));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(outcome.reason()).contains("refused the update of").contains("duplicate key").doesNotContain("Exception");
        assertNothingInEffectNothingLocked();
        assertThat(mongo.transactions(mongo.database()).find().first().getString("state")).isEqualTo("canceled");
    }

    @Test
    void insertViolatingAUniqueIndexOfAnotherField_cancelsTheWholeTransaction_nothingInEffectNothingLocked() {
        TransactionOutcome outcome = manager(CrashHook.NONE).run(List.of(
                Operation.increment(accounts.a(), "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                Operation.increment(accounts.b(), "balance", 30L, null),
                Operation.insert(created, new Document("email", "bob@example.com"))));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(outcome.reason()).contains("refused the insert of").contains("duplicate key").doesNotContain("Exception");
        assertNothingInEffectNothingLocked();
    }

    @Test
    void pushToATextField_cancelsTheWholeTransaction_nothingInEffectNothingLocked() {
        TransactionOutcome outcome = manager(CrashHook.NONE).run(withUpdate(new Document("$push", new Document("tags", "gold"))));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertNothingInEffectNothingLocked();
    }

    @Test
    void changedNotCommitted_readersShowTheBeforeImage_committedNotReleased_readersShowTheChange() {
        TransactionManager reader = manager(CrashHook.NONE);
        List<Object> seen = new ArrayList<>();
        CrashHook look = (point, id) -> {
            if (point.equals(CrashPoint.before(Step.COMMIT, -1)) || point.equals(CrashPoint.after(Step.COMMIT, -1))) {
                // the change is stored (round 1b ran), the lock with its before-image still on the document
                assertThat(stored("ann")).containsEntry("email", "ann@new.example.com").containsKey("_m2pc");
                seen.add(reader.readCommitted(ann).orElseThrow().get("email"));
                List<Optional<Document>> cut = reader.readCommitted(List.of(ann, accounts.a(), created));
                seen.add(cut.get(0).orElseThrow().get("email"));
                seen.add(cut.get(1).orElseThrow().get("balance"));
                seen.add(cut.get(2).isPresent());
            }
        };

        TransactionOutcome outcome = manager(look).run(withUpdate(new Document("$set", new Document("email", "ann@new.example.com"))));

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(seen).containsExactly("ann@example.com", "ann@example.com", 100L, false,
                "ann@new.example.com", "ann@new.example.com", 70L, true);
        assertThat(stored("ann")).as("changed once: its version counts one commit").isEqualTo(new Document("_id", "ann")
                .append("email", "ann@new.example.com").append("tags", "vip").append(LibraryFields.VERSION, 1L));
    }

    /** The owner's process ends at {@code point}; another manager recovers once the lease is over. */
    private void crashAt(CrashPoint point, String readBefore) {
        CrashHook die = (p, id) -> {
            if (p.equals(point)) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        Document update = new Document("$set", new Document("email", "ann@new.example.com"));
        assertThatThrownBy(() -> pendingInsert(die).run(withUpdate(update))).hasMessageContaining("process ends");
        assertThat(stored("ann")).containsKey("_m2pc");
        TransactionManager other = manager(CrashHook.NONE);
        assertThat(other.readCommitted(ann).orElseThrow()).as("not committed: as it was").containsEntry("email", "ann@example.com")
                .doesNotContainKey("_m2pc");
        assertThat(stored("ann").getString("email")).isEqualTo(readBefore);

        mongo.expireLeases(mongo.database());
        other.recover(Duration.ZERO);

        assertThat(mongo.transactions(mongo.database()).find().first().getString("state")).isEqualTo("done");
        assertThat(stored("ann")).as("changed once: its version counts one commit").isEqualTo(new Document("_id", "ann")
                .append("email", "ann@new.example.com").append("tags", "vip").append(LibraryFields.VERSION, 1L));
        assertThat(account("A")).containsEntry("balance", 70L);
        assertThat(account("B")).containsEntry("balance", 30L);
        assertThat(stored("new")).containsEntry("email", "new@example.com").doesNotContainKey("_m2pc");
    }

    @Test
    void ownerDiesBeforeTheChange_anotherManagerRecovers_changesOnceAndCommits() {
        crashAt(CrashPoint.before(Step.CHANGE, 3), "ann@example.com");
    }

    @Test
    void ownerDiesAfterTheChange_anotherManagerRecovers_doesNotChangeAgainAndCommits() {
        crashAt(CrashPoint.after(Step.CHANGE, 3), "ann@new.example.com");
    }

    @Test
    void ownerDiesAfterTheChange_recoveryCancelsByOperator_restoresTheBeforeImage() {
        CrashHook die = (p, id) -> {
            if (p.equals(CrashPoint.after(Step.CHANGE, 3))) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        assertThatThrownBy(() -> pendingInsert(die).run(withUpdate(new Document("$set", new Document("email", "ann@new.example.com")))))
                .hasMessageContaining("process ends");
        Object id = mongo.transactions(mongo.database()).find().first().get("_id");
        mongo.expireLeases(mongo.database());

        manager(CrashHook.NONE).cancel(id, "an operator cancels it");

        assertThat(mongo.transactions(mongo.database()).find().first().getString("state")).isEqualTo("canceled");
        assertNothingInEffectNothingLocked();
    }
}
