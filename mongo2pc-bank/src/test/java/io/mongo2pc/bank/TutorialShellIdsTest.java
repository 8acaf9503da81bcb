package io.mongo2pc.bank;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (found in review): an application that followed the tutorial in the mongo shell with
 * numeric account ids ({_id: 1, balance: 1000}: the shell stores 1 as a double) left a transfer
 * pending with the
 * source debited (marker present) and the destination not credited. Recovery refused the double
 * ids and left the debit and its marker for good; it finishes the transfer now.
 */
class TutorialShellIdsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void pendingTutorialTransfer_betweenShellNumericAccountIds_isRolledForward() {
        MongoCollection<Document> accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        MongoCollection<Document> transactions = mongo.client().getDatabase(mongo.database()).getCollection("transactions");
        accounts.insertOne(new Document("_id", 1.0).append("balance", 900.0).append("pendingTransactions", new ArrayList<>(List.of(1.0))));
        accounts.insertOne(new Document("_id", 2.0).append("balance", 1000.0).append("pendingTransactions", new ArrayList<>()));
        transactions.insertOne(new Document("_id", 1.0).append("source", 1.0).append("destination", 2.0)
                .append("value", 100.0).append("state", "pending").append("lastModified", new Date(0)));
        mongo.invariants().expectTotal(mongo.database(), 2000L);

        TransactionManager manager = Bank.configure(TransactionManager.builder().target("default", mongo.client())
                .database(mongo.database()).application("mongo2pc-recovery")).build();
        RecoveryReport report = manager.recover(Duration.ZERO);

        assertThat(report.rolledForward()).as("report " + report).isEqualTo(1);
        assertThat(transactions.find().first().getString("state")).isEqualTo("done");
        assertThat(accounts.find(new Document("_id", 2.0)).first().get("balance")).isEqualTo(1100.0);
    }
}
