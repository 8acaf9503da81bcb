package io.mongo2pc.testkit;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol's invariants, read straight from the documents with the plain driver (not through
 * the code under test): no transaction left open, no marker left on any document, no negative
 * balance in any {@code accounts} collection, and the total of balances equal to what a test
 * declared. Not thread-safe: used by one test at a time.
 */
public final class Invariants {
    /** Every spelling of an open state, as applications write them (seed 001 capitalizes: "Pending"). */
    private static final Set<String> OPEN = Set.of("initial", "pending", "applied", "committed", "canceling",
            "Initial", "Pending", "Applied", "Committed", "Canceling");
    private static final Set<String> SYSTEM = Set.of("admin", "local", "config");

    private final MongoClient client;
    private final String databasePrefix;
    private final Map<String, BigDecimal> expectedTotals = new LinkedHashMap<>();

    /** Checks every database whose name starts with {@code databasePrefix} ("" for all). */
    public Invariants(MongoClient client, String databasePrefix) {
        this.client = client;
        this.databasePrefix = databasePrefix;
    }

    /** Checks every database on the server. */
    public Invariants(MongoClient client) {
        this(client, "");
    }


    /** Declares the total of {@code balance} over {@code database}.accounts that must hold after the test. */
    public Invariants expectTotal(String database, Number total) {
        expectedTotals.put(database, toBigDecimal(total));
        return this;
    }

    /** Every violation found, as readable lines; empty when all invariants hold. */
    public List<String> violations() {
        List<String> violations = new ArrayList<>();
        for (String dbName : client.listDatabaseNames()) {
            if (SYSTEM.contains(dbName) || !dbName.startsWith(databasePrefix)) {
                continue;
            }
            MongoDatabase db = client.getDatabase(dbName);
            for (String collName : db.listCollectionNames()) {
                MongoCollection<Document> coll = db.getCollection(collName);
                if (collName.equals("transactions") || collName.endsWith(".transactions")) {
                    for (Document tx : coll.find(new Document("state", new Document("$in", List.copyOf(OPEN))))) {
                        violations.add(dbName + "." + collName + ": transaction " + tx.get("_id") + " is still "
                                + tx.get("state") + ": " + tx.toJson());
                    }
                }
                for (Document doc : coll.find(new Document("pendingTransactions.0", new Document("$exists", true)))) {
                    violations.add(dbName + "." + collName + ": document " + doc.get("_id") + " keeps markers "
                            + doc.get("pendingTransactions"));
                }
                if (collName.equals("accounts")) {
                    BigDecimal total = BigDecimal.ZERO;
                    for (Document account : coll.find()) {
                        Object balance = account.get("balance");
                        if (balance instanceof Number || balance instanceof Decimal128) {
                            BigDecimal value = toBigDecimal(balance);
                            total = total.add(value);
                            if (value.signum() < 0) {
                                violations.add(dbName + ".accounts: account " + account.get("_id") + " is negative: " + balance);
                            }
                        }
                    }
                    BigDecimal expected = expectedTotals.get(dbName);
                    if (expected != null && expected.compareTo(total) != 0) {
                        violations.add(dbName + ".accounts: total of balances is " + total + ", expected " + expected);
                    }
                }
            }
        }
        return violations;
    }

    /** Fails the test with every violation listed. */
    public void assertHold() {
        assertThat(violations()).as("protocol invariants after the test").isEmpty();
    }

    /**
     * The exact value of a stored number. Not core's {@code Numbers.exact}: the checker reads the
     * documents without the code under test (and core's own tests depend on this module).
     */
    static BigDecimal toBigDecimal(Object number) {
        if (number instanceof Decimal128 d) {
            return new BigDecimal(d.toString()); // via the text: bigDecimalValue() throws on a negative zero
        }
        if (number instanceof Double d) {
            return BigDecimal.valueOf(d);
        }
        if (number instanceof BigDecimal b) {
            return b;
        }
        return BigDecimal.valueOf(((Number) number).longValue());
    }
}
