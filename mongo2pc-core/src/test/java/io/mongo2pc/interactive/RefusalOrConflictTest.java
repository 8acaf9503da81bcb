package io.mongo2pc.interactive;

import com.mongodb.ConnectionString;
import com.mongodb.ErrorCategory;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.client.model.IndexOptions;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A write that fails at commit ends the transaction canceled only when the database refused it for
 * good and what the body read still holds. An insert that meets a document of the same id, gone
 * again when the insert reads why (another transaction's insert undone in between, as when two
 * checkouts of one order race), is a conflict; so is a refusal of a write the body decided on a read
 * that a commit since made stale. Either way the body runs again and commits.
 */
class RefusalOrConflictTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void insertMeetsADocumentThatIsGoneWhenRead_theBodyRunsAgain_andCommits() {
        MongoCollection<Document> shipments = mongo.client().getDatabase(mongo.database()).getCollection("shipments");
        AtomicInteger duplicates = new AtomicInteger();
        // The first duplicate-key answer to the insert: the document in the way is removed before the
        // insert reads it, as another transaction's undo would remove its own insert.
        CommandListener undoInBetween = new CommandListener() {
            @Override
            public void commandFailed(CommandFailedEvent event) {
                if (event.getThrowable() instanceof MongoCommandException e
                        && ErrorCategory.fromErrorCode(e.getErrorCode()) == ErrorCategory.DUPLICATE_KEY
                        && duplicates.getAndIncrement() == 0) {
                    shipments.deleteOne(new Document("_id", "s1"));
                }
            }
        };
        DocumentRef shipment = DocumentRef.of(mongo.database(), "shipments", "s1");
        AtomicInteger runs = new AtomicInteger();
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(mongo.uri())).addCommandListener(undoInBetween).build());
             TransactionManager tm = TestManagers.builder(client, mongo.database(), "inserts").finishInBackground(false).build()) {
            TransactionResult<Integer> r = tm.transact(ctx -> {
                assertThat(ctx.insert(shipment, new Document("order", "o1"))).as("s1 is not there when read").isTrue();
                if (runs.incrementAndGet() == 1) { // another's insert of s1 lands between the read and the commit
                    shipments.insertOne(new Document("_id", "s1").append("order", "someone else's, being undone"));
                }
                return runs.get();
            });

            assertThat(duplicates.get()).as("the insert met the document in the way").isEqualTo(1);
            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(2);
            assertThat(r.value()).isEqualTo(2);
        }
        assertThat(shipments.find(new Document("_id", "s1")).first().getString("order")).isEqualTo("o1");
    }

    /** The collection docs, with a unique index on code and x1 holding code "a". */
    private static MongoCollection<Document> docsWithCodeA() {
        MongoCollection<Document> docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.createIndex(new Document("code", 1), new IndexOptions().unique(true));
        docs.insertOne(new Document("_id", "x1").append("code", "a"));
        return docs;
    }

    @Test
    void insertRefusedByAUniqueIndex_decidedOnAReadMadeStale_theBodyRunsAgain_andCommits() {
        MongoCollection<Document> docs = docsWithCodeA();
        docs.insertOne(new Document("_id", "cfg").append("next", "a"));
        DocumentRef cfg = DocumentRef.of(mongo.database(), "docs", "cfg");
        DocumentRef x2 = DocumentRef.of(mongo.database(), "docs", "x2");
        AtomicInteger runs = new AtomicInteger();
        try (TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "refusals").finishInBackground(false).build()) {
            TransactionResult<String> r = tm.transact(ctx -> {
                String code = ctx.get(cfg).orElseThrow().getString("next");
                if (runs.incrementAndGet() == 1) { // another transaction moves the code on, and commits, after our read
                    CompletableFuture.runAsync(() -> tm.transact(other -> other.update(cfg,
                            new Document("$set", new Document("next", "b"))))).join();
                }
                ctx.insert(x2, new Document("code", code));
                return code;
            });

            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(2);
            assertThat(r.value()).isEqualTo("b");
        }
        assertThat(docs.find(new Document("_id", "x2")).first().getString("code")).isEqualTo("b");
    }

    @Test
    void insertRefusedByAUniqueIndex_whatTheBodyReadStillHolds_endsCanceledAtTheFirstAttempt() {
        MongoCollection<Document> docs = docsWithCodeA();
        DocumentRef x2 = DocumentRef.of(mongo.database(), "docs", "x2");
        try (TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "refusals").finishInBackground(false).build()) {
            TransactionResult<Object> r = tm.transact(TransactionOptions.builder().timeout(Duration.ofSeconds(3)).build(), ctx -> {
                ctx.insert(x2, new Document("code", "a"));
                return null;
            });

            assertThat(r.outcome().state()).as(String.valueOf(r.outcome())).isEqualTo(TransactionState.CANCELED);
            assertThat(r.outcome().reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
            assertThat(r.outcome().reason()).contains("refused the insert of").contains("duplicate key");
            assertThat(r.attempts()).isEqualTo(1);
        }
        assertThat(docs.find(new Document("_id", "x2")).first()).isNull();
    }
}
