package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a participant write matches nothing, a read tells why. Regression: a write refused because
 * another transaction held the document, which let it go just before that read, was reported as
 * "guard does not hold" and canceled the transaction (a transfer with enough money declined as if
 * it had too little).
 */
class RefusalDiagnosisTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void writeRefusedByALock_releasedBeforeTheDiagnosis_isTriedAgainInsteadOfCanceledForItsGuard() throws Exception {
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        // Another transaction holds A exclusively (its lock), so the debit's write matches nothing.
        accounts.insertOne(new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of())
                .append("_m2pc", new Document("tx", "other").append("kind", "update")));
        accounts.insertOne(new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of()));
        DocumentRef a = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "accounts", "A");
        DocumentRef b = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "accounts", "B");
        AtomicBoolean released = new AtomicBoolean();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            // ... and lets it go just before the read that asks why (the first find on accounts)
            proxy.runBefore(request -> request.contains("find") && request.contains("accounts") && !request.contains("findAndModify"),
                    () -> released.set(accounts.updateOne(new Document("_id", "A"),
                            new Document("$unset", new Document("_m2pc", ""))).getModifiedCount() == 1));
            TransactionManager manager = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("app").conflictTimeout(Duration.ofSeconds(5)).build();

            TransactionOutcome outcome = manager.run(List.of(
                    Operation.increment(a, "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                    Operation.increment(b, "balance", 30L, null)));

            assertThat(released).as("the lock was let go between the write and the read").isTrue();
            assertThat(outcome.state()).as("reason: " + outcome.reason()).isEqualTo(TransactionState.DONE);
            assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(70L);
            assertThat(accounts.find(new Document("_id", "B")).first().getLong("balance")).isEqualTo(30L);
        }
    }
}
