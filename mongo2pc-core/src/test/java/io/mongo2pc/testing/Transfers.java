package io.mongo2pc.testing;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

/**
 * Transfers between accounts written as generic increments, for core's tests of the protocol that
 * the bank's tests repeat on its own transfers: accounts {@code {_id, balance, pendingTransactions: []}}
 * in a database's {@code accounts} collection, and a transfer's two guarded increments. Stateless.
 */
public final class Transfers {
    private Transfers() { }

    /** Creates the account {@code id} with {@code balance} in {@code database}'s {@code accounts} collection. */
    public static void createAccount(MongoDatabase database, String id, long balance) {
        database.getCollection("accounts").insertOne(new Document("_id", id).append("balance", balance)
                .append("pendingTransactions", new ArrayList<>()));
    }

    /**
     * The operations of a transfer of {@code amount} from {@code source} to {@code destination}:
     * the debit guarded by the source's funds, the credit by the room left below {@code Long.MAX_VALUE}.
     */
    public static List<Operation> of(String database, String source, String destination, long amount) {
        return List.of(
                Operation.increment(DocumentRef.of(database, "accounts", source), "balance", -amount,
                        new Document("balance", new Document("$gte", amount))),
                Operation.increment(DocumentRef.of(database, "accounts", destination), "balance", amount,
                        new Document("balance", new Document("$lte", Long.MAX_VALUE - amount))));
    }
}
