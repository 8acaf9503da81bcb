package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;

import java.util.List;

/** Accounts A and B in the tutorial's shape in the test's database: the two-round tests' fixture. */
public record TwoAccounts(MongoCollection<Document> collection, DocumentRef a, DocumentRef b) {

    public static TwoAccounts create(EmbeddedMongo mongo, long balanceA, long balanceB) {
        MongoCollection<Document> accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertMany(List.of(new Document("_id", "A").append("balance", balanceA).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", balanceB).append("pendingTransactions", List.of())));
        return new TwoAccounts(accounts, DocumentRef.of(mongo.database(), "accounts", "A"),
                DocumentRef.of(mongo.database(), "accounts", "B"));
    }
}
