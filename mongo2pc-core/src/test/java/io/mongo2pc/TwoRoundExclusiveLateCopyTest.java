package io.mongo2pc;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A late copy of each exclusive prepare of the two-round commit: the network holds the take of an
 * update or a delete, an update's change (round 1b), or the insert, past the owner's deadline; the owner's request times out (in
 * doubt), the owner waits it out, then commits (sending it again) or cancels; then the held copy
 * reaches the server. A take fails its deadline and changes nothing; an insert finds the committed
 * document (duplicate key) or, after a cancel, writes a document that reads as never written and
 * that recovery's sweep removes.
 */
@Tag("slow")
class TwoRoundExclusiveLateCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SKEW = Duration.ofMillis(100);
    /** How long the network holds the copy: past the owner's deadline, its wait and its commit or cancel. */
    private static final long HOLD_MS = 5 * LEASE.toMillis();

    private MongoCollection<Document> docs;
    private DocumentRef order;
    private DocumentRef gone;
    private DocumentRef created;

    @BeforeEach
    void documents() {
        docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.insertOne(new Document("_id", "order").append("status", "open").append("paid", 0L));
        docs.insertOne(new Document("_id", "gone").append("note", "delete me"));
        order = DocumentRef.of(mongo.database(), "docs", "order");
        gone = DocumentRef.of(mongo.database(), "docs", "gone");
        created = DocumentRef.of(mongo.database(), "docs", "created");
    }

    private static TransactionManager manager(MongoClient client) {
        return TransactionManager.builder().target("default", client).database(mongo.database()).application("late")
                .twoRoundCommit(true).finishInBackground(false).lease(LEASE).maxClockSkew(SKEW).retryTimeout(Duration.ofSeconds(10)).build();
    }

    /** The order's update (refused when {@code orderStatus} does not match), the delete and the insert. */
    private List<Operation> three(String orderStatus) {
        return List.of(Operation.update(order, new Document("$inc", new Document("paid", 5L)), new Document("status", orderStatus)),
                Operation.delete(gone, null),
                Operation.insert(created, new Document("amount", 5L)));
    }

    /**
     * A take's filter requires the document free of markers (its release and undo do not); a
     * document's id is matched as a whole BSON string (so that "order" is not found in "ordered").
     */
    private static final Predicate<String> UPDATE_TAKE = text -> text.contains("\u0000order\u0000") && text.contains("pendingTransactions.0");
    private static final Predicate<String> DELETE_TAKE = text -> text.contains("\u0000gone\u0000") && text.contains("pendingTransactions.0");
    /** An update's change (round 1b): the user's operator and the before-image into the lock; no undo has {@code $inc}. */
    private static final Predicate<String> UPDATE_CHANGE = text -> text.contains("\u0000order\u0000") && text.contains("$inc")
            && text.contains("_m2pc.undo");
    private static final Predicate<String> INSERT = text -> text.contains("\u0000created\u0000") && text.contains("_m2pc.at");

    /**
     * Runs {@code ops} through a proxy that holds the first request {@code held} accepts for
     * {@link #HOLD_MS}; returns once the server has answered {@code copies} such requests (the late
     * copy among them).
     */
    private TransactionOutcome runWithLateCopy(List<Operation> ops, Predicate<String> held, int copies) throws Exception {
        return runWithLateCopy(ops, held, copies, () -> { });
    }

    /** The same, running {@code meanwhile} once the transaction ended and before the late copy lands. */
    private TransactionOutcome runWithLateCopy(List<Operation> ops, Predicate<String> held, int copies, Runnable meanwhile)
            throws Exception {
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS))
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            proxy.countAnswers(held);
            proxy.runBefore(held, () -> sleep(HOLD_MS));
            TransactionOutcome outcome = manager(viaProxy).run(ops);
            assertThat(proxy.answered.get()).as("the held copy was still on its way when the transaction ended").isLessThan(copies);
            meanwhile.run();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (proxy.answered.get() < copies && System.nanoTime() < deadline) {
                sleep(20);
            }
            assertThat(proxy.answered.get()).as("the late copy reached the server").isGreaterThanOrEqualTo(copies);
            return outcome;
        }
    }

    private Document stored(String id) {
        return docs.find(new Document("_id", id)).first();
    }

    @Test
    void lateTakeOfAnUpdate_afterItsTransactionCommitted_changesNothing() throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("open"), UPDATE_TAKE, 2);

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("order")).as("changed once, not taken again").containsEntry("paid", 5L).doesNotContainKey("_m2pc");
        assertThat(stored("gone")).isNull();
        assertThat(stored("created")).containsEntry("amount", 5L).doesNotContainKey("_m2pc");
    }

    @Test
    void lateTakeOfADelete_afterItsTransactionCanceled_changesNothing() throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("closed"), DELETE_TAKE, 1);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(stored("gone")).as("not taken by the canceled transaction").containsEntry("note", "delete me")
                .doesNotContainKey("_m2pc");
        assertThat(stored("order")).containsEntry("paid", 0L).doesNotContainKey("_m2pc");
        assertThat(stored("created")).isNull();
    }

    @Test
    void lateChangeOfAnUpdate_afterItsTransactionCommitted_changesNothingMore() throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("open"), UPDATE_CHANGE, 2);

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("order")).as("changed once").containsEntry("paid", 5L).doesNotContainKey("_m2pc");
    }

    @Test
    void lateChangeOfAnUpdate_afterItsTransactionCanceled_changesNothing() throws Exception {
        // The delete of a missing document is refused first; the update's change is in doubt, waited
        // out, and the transaction canceled; then the held change reaches the server.
        List<Operation> ops = List.of(Operation.delete(DocumentRef.of(mongo.database(), "docs", "missing"), null),
                Operation.update(order, new Document("$inc", new Document("paid", 5L)), new Document("status", "open")));

        TransactionOutcome outcome = runWithLateCopy(ops, UPDATE_CHANGE, 1);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.DOCUMENT_MISSING);
        assertThat(stored("order")).as("not changed by the canceled transaction").containsEntry("paid", 0L)
                .containsEntry("status", "open").doesNotContainKey("_m2pc");
    }

    @Test
    void lateInsert_afterItsTransactionCommitted_hitsTheCommittedDocument() throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("open"), INSERT, 2);

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("created")).containsEntry("amount", 5L).doesNotContainKey("_m2pc");
        assertThat(stored("order")).containsEntry("paid", 5L).doesNotContainKey("_m2pc");
    }

    @Test
    void lateInsert_afterItsTransactionCommittedAndTheDocumentWasDeleted_readsAsNeverWritten_andIsNotRolledForward()
            throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("open"), INSERT, 2,
                () -> docs.deleteOne(new Document("_id", "created"))); // the user deletes the committed document

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        TransactionManager reader = manager(mongo.client());
        assertThat(reader.readCommitted(created)).as("a late insert of a committed transaction").isEmpty();
        reader.recover(Duration.ZERO);
        assertThat(stored("created")).as("removed by the sweep, not rolled forward").isNull();
    }

    @Test
    void lateInsert_afterItsTransactionCanceled_readsAsNeverWritten_andRecoveryRemovesIt() throws Exception {
        TransactionOutcome outcome = runWithLateCopy(three("closed"), INSERT, 1);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        TransactionManager reader = manager(mongo.client());
        assertThat(reader.readCommitted(created)).as("a late insert of a canceled transaction").isEmpty();
        reader.recover(Duration.ZERO);
        assertThat(stored("created")).as("removed by the sweep").isNull();
        assertThat(stored("gone")).containsEntry("note", "delete me").doesNotContainKey("_m2pc");
        assertThat(stored("order")).containsEntry("paid", 0L).doesNotContainKey("_m2pc");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
