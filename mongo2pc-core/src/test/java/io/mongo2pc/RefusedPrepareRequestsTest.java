package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.CommandsTo;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A two-round transfer refused for insufficient funds: the debit's prepare matches nothing in the
 * request that carried both prepares. The credit's prepare took effect there and the read-back
 * shows it, so it is not sent again; the refusal costs the read-back, the debit sent on its own
 * and two reads telling why; the refused document, read once, serves for resolving the markers on it.
 */
class RefusedPrepareRequestsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private final AtomicInteger prepares = new AtomicInteger();
    private final AtomicInteger creditPrepares = new AtomicInteger();
    private final AtomicInteger finds = new AtomicInteger();

    @Test
    void refusedDebit_doesNotSendTheCreditAgain_andReadsTheRefusedDocumentOnce() {
        String db = mongo.database();
        TwoAccounts two = TwoAccounts.create(mongo, 5, 0);
        MongoCollection<Document> accounts = two.collection();
        DocumentRef a = two.a();
        DocumentRef b = two.b();
        mongo.invariants().expectTotal(db, 5L);
        try (MongoClient counted = countingClient()) {
            TransactionManager manager = TestManagers.builder(counted, db, "app").finishInBackground(false).build();

            TransactionOutcome outcome = manager.run("t-poor", List.of(
                    Operation.increment(a, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                    Operation.increment(b, "balance", 10L, null)));

            assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
            assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
            assertThat(creditPrepares.get()).as("prepares of the credit sent").isEqualTo(1);
            assertThat(prepares.get()).as("prepares sent: both together, then the debit on its own").isEqualTo(3);
            // The read-back, two reads telling why the debit was refused (the second: whether the guard holds
            // now), and the cancel's check that the debit, whose undo matched nothing, has no entry.
            assertThat(finds.get()).as("reads of accounts").isEqualTo(4);
        }
        assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(5L);
        assertThat(accounts.find(new Document("_id", "B")).first().getLong("balance")).isZero();
    }

    private MongoClient countingClient() {
        return CommandsTo.client(mongo.uri(), "accounts", (name, command) -> {
            if (name.equals("find")) {
                finds.incrementAndGet();
            } else if (name.equals("update")) {
                for (BsonValue statement : command.getArray("updates", new BsonArray())) {
                    BsonDocument u = statement.asDocument().getDocument("u");
                    if (u.containsKey("$push")) {
                        prepares.incrementAndGet();
                        if (statement.asDocument().getDocument("q").get("_id").equals(new BsonString("B"))) {
                            creditPrepares.incrementAndGet();
                        }
                    }
                }
            }
        });
    }
}
