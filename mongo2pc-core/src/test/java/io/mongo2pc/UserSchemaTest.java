package io.mongo2pc;

import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A generic transaction leaves the user's schema alone: once its marker is gone, an inserted or
 * updated document carries no field of the library that it did not have before but its version
 * ({@code _m2pc_v}, which counts the commits that changed it), whether the transaction committed or
 * was canceled, ran in one go or was finished by recovery; a canceled one leaves not even that; a
 * document that had {@code pendingTransactions: []} (the tutorial's accounts) keeps it.
 */
class UserSchemaTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    MongoCollection<Document> orders;

    @BeforeEach
    void setUp() {
        manager = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database()).build();
        orders = mongo.client().getDatabase(mongo.database()).getCollection("orders");
        orders.insertMany(List.of(new Document("_id", "o1").append("state", "UnPaid"),
                new Document("_id", "tutorial").append("state", "UnPaid").append("pendingTransactions", List.of())));
    }

    private DocumentRef ref(String id) {
        return DocumentRef.of(mongo.database(), "orders", id);
    }

    /** The stored document without its version, which {@link #version} reads. */
    private Document stored(String id) {
        Document doc = orders.find(new Document("_id", id)).first();
        doc.remove(LibraryFields.VERSION);
        return doc;
    }

    private Object version(String id) {
        return orders.find(new Document("_id", id)).first().get(LibraryFields.VERSION);
    }

    @Test
    void insertAndUpdate_committed_leaveNoLibraryFieldButTheirVersionOnTheUsersDocuments() {
        TransactionOutcome outcome = manager.run(List.of(
                Operation.insert(ref("o2"), new Document("state", "New")),
                Operation.update(ref("o1"), new Document("$set", new Document("state", "Paid")), new Document()),
                Operation.update(ref("tutorial"), new Document("$set", new Document("state", "Paid")), new Document())));

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(stored("o2")).isEqualTo(new Document("_id", "o2").append("state", "New"));
        assertThat(stored("o1")).isEqualTo(new Document("_id", "o1").append("state", "Paid"));
        assertThat(stored("tutorial")).isEqualTo(new Document("_id", "tutorial").append("state", "Paid")
                .append("pendingTransactions", List.of()));
        assertThat(version("o1")).as("one commit changed o1").isEqualTo(1L);
        assertThat(version("o2")).as("an insert starts at a random version").isInstanceOf(Long.class);
    }

    @Test
    void replacementAndDelete_canceled_leaveTheDocumentsAsTheyWere() {
        TransactionOutcome outcome = manager.run(List.of(
                Operation.update(ref("o1"), new Document("state", "Replaced"), new Document()),
                Operation.delete(ref("tutorial"), new Document()),
                Operation.update(ref("missing"), new Document("$set", new Document("state", "Paid")), new Document())));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(version("o1")).as("nothing committed on o1").isNull();
        assertThat(stored("o1")).isEqualTo(new Document("_id", "o1").append("state", "UnPaid"));
        assertThat(stored("tutorial")).isEqualTo(new Document("_id", "tutorial").append("state", "UnPaid")
                .append("pendingTransactions", List.of()));
    }

    @Test
    void deleteTaken_thenCanceledByRecovery_leavesNoLibraryField() {
        // Stopped after the delete's take (lock and marker on, no before-image); recovery meets the
        // missing document, cancels, and gives the taken document back.
        RuntimeException stop = new RuntimeException("stop");
        TransactionManager owner = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .lease(Duration.ofMillis(200)).crashHook((point, id) -> {
                    if (point.equals(CrashPoint.before(CrashPoint.Step.APPLY, 1))) {
                        throw stop;
                    }
                }).build();
        assertThatThrownBy(() -> owner.run(List.of(
                Operation.delete(ref("o1"), new Document()),
                Operation.update(ref("none"), new Document("$set", new Document("state", "Paid")), new Document())))).isSameAs(stop);

        mongo.expireLeases(mongo.database());
        RecoveryReport report = manager.recover(Duration.ZERO);

        assertThat(report.canceled()).isEqualTo(1);
        assertThat(stored("o1")).isEqualTo(new Document("_id", "o1").append("state", "UnPaid"));
    }

    @Test
    void readCommitted_ofAnUpdatedDocument_showsNoLibraryField() {
        manager.run(List.of(Operation.update(ref("o1"), new Document("$set", new Document("state", "Paid")), new Document())));

        assertThat(manager.readCommitted(ref("o1")).orElseThrow()).isEqualTo(new Document("_id", "o1").append("state", "Paid"));
    }
}
