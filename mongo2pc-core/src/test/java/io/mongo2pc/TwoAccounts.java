package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Accounts A and B in the tutorial's shape in the test's database: the two-round tests' fixture. */
public record TwoAccounts(MongoCollection<Document> collection, DocumentRef a, DocumentRef b) {

    public static TwoAccounts create(EmbeddedMongo mongo, long balanceA, long balanceB) {
        MongoCollection<Document> accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertMany(List.of(new Document("_id", "A").append("balance", balanceA).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", balanceB).append("pendingTransactions", List.of())));
        return new TwoAccounts(accounts, DocumentRef.of(mongo.database(), "accounts", "A"),
                DocumentRef.of(mongo.database(), "accounts", "B"));
    }

    /** A transfer of {@code value} from A to B, the debit guarded by A's funds. */
    public List<Operation> transfer(long value) {
        return List.of(Operation.increment(a, "balance", -value, new Document("balance", new Document("$gte", value))),
                Operation.increment(b, "balance", value, null));
    }

    /** The balances of the accounts in id order, checking that no transaction left a marker or an entry on them. */
    public List<Long> settledBalances() {
        List<Long> balances = new ArrayList<>();
        for (Document doc : collection.find().sort(new Document("_id", 1))) {
            balances.add(doc.getLong("balance"));
            assertThat(doc.getList("pendingTransactions", Object.class)).as("markers on " + doc.get("_id")).isEmpty();
            assertThat(doc.keySet()).as("entries on " + doc.get("_id")).noneMatch(k -> LibraryFields.entry(k));
        }
        return balances;
    }
}
