package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A filter with {@code _id} equality plus other conditions must look the {@code _id} up: its rate
 * must hardly depend on the collection size. A coarse functional check with generous margins
 * (a scan is about 600 times slower at 100,000 documents); precise numbers are in BENCHMARKS.md.
 */
@Tag("slow")
class IdLookupTest {

    @Test
    void guardedUpdatesAndFinds_byIdPlusConditions_doNotScanTheCollection() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");
            load(accounts, 100);
            rate(accounts, 100, 1500); // warm-up
            double small = rate(accounts, 100, 2000);

            load(accounts, 100_000);
            rate(accounts, 100_000, 500); // warm-up
            double big = rate(accounts, 100_000, 2000);

            System.out.printf("guarded operations: %.0f/s at 100 docs, %.0f/s at 100,000 docs%n", small, big);
            assertThat(big).as("rate at 100,000 docs vs %.0f/s at 100 docs", small).isGreaterThan(small / 10);
        }
    }

    @Test
    void idLookup_appliesTheWholeFilter() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");
            load(accounts, 10);
            // given a guard that does not hold
            Bson guard = Filters.and(Filters.eq("_id", "acc-1"), Filters.gte("balance", 5000));
            assertThat(accounts.updateOne(guard, Updates.inc("balance", -1)).getMatchedCount()).isZero();
            assertThat(accounts.find(guard).first()).isNull();
            // and one that holds, in both filter shapes
            Document raw = new Document("_id", "acc-1").append("balance", new Document("$gte", 10))
                    .append("pendingTransactions", new Document("$ne", "t1"));
            assertThat(accounts.updateOne(raw, Updates.push("pendingTransactions", "t1")).getModifiedCount()).isEqualTo(1);
            assertThat(accounts.updateOne(raw, Updates.push("pendingTransactions", "t1")).getMatchedCount()).isZero();
            assertThat(accounts.find(Filters.eq("_id", new Document("$eq", "acc-1"))).first().getList("pendingTransactions", String.class))
                    .containsExactly("t1");
            assertThat(accounts.countDocuments(Filters.and(Filters.eq("_id", "acc-2"), Filters.eq("balance", 1000)))).isEqualTo(1);
            assertThat(accounts.countDocuments(Filters.and(Filters.eq("_id", "nope"), Filters.eq("balance", 1000)))).isZero();
        }
    }

    @Test
    void idIn_looksUpEachId_andGivesWhatAScanGives() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");
            load(accounts, 100_000);
            accounts.updateOne(Filters.eq("_id", "acc-7"), Updates.set("balance", 5));
            // Same results as a scan: stored order, no duplicates, missing ids skipped, whole filter applied.
            List<Object> ids = List.of("acc-99999", "acc-7", "nope", "acc-7", "acc-3");
            assertThat(accounts.find(Filters.in("_id", ids)).map(d -> d.getString("_id")).into(new ArrayList<>()))
                    .containsExactly("acc-3", "acc-7", "acc-99999");
            assertThat(accounts.find(Filters.and(Filters.in("_id", ids), Filters.gte("balance", 10)))
                    .map(d -> d.getString("_id")).into(new ArrayList<>()))
                    .containsExactly("acc-3", "acc-99999");
            assertThat(accounts.countDocuments(Filters.in("_id", List.of()))).isZero();
            // Regression: with the lookup a natural-descending sort gave stored order, not its reverse.
            assertThat(accounts.find(Filters.and(Filters.in("_id", ids), Filters.gte("balance", 0)))
                    .sort(new Document("$natural", -1)).map(d -> d.getString("_id")).into(new ArrayList<>()))
                    .containsExactly("acc-99999", "acc-7", "acc-3");
            // An $in that is not all plain values is left to the scan, which still answers right.
            assertThat(accounts.countDocuments(Filters.in("_id", List.of("acc-1", new Document("x", 1))))).isEqualTo(1);
            assertThat(accounts.updateMany(Filters.in("_id", List.of("acc-1", "acc-2")), Updates.inc("balance", 1))
                    .getModifiedCount()).isEqualTo(2);

            // Side by side in one second each, so a loaded machine slows both alike: a scan of 100,000
            // documents per read manages a few dozen; a lookup, thousands.
            long start = System.nanoTime();
            int scans = 0;
            while (System.nanoTime() - start < 1_000_000_000L) {
                int a = ThreadLocalRandom.current().nextInt(100_000);
                // the same kind of read without an _id condition: a scan of every document
                assertThat(accounts.find(Filters.eq("balance", -1 - a)).into(new ArrayList<>())).isEmpty();
                scans++;
            }
            start = System.nanoTime();
            int reads = 0;
            while (System.nanoTime() - start < 1_000_000_000L) {
                int a = ThreadLocalRandom.current().nextInt(100_000);
                // With a condition beside the $in (upstream only looks a bare {_id: {$in: ...}} up).
                assertThat(accounts.find(Filters.and(Filters.in("_id", List.of("acc-" + a, "acc-" + (99_999 - a))),
                        Filters.gte("balance", 0))).into(new ArrayList<>())).hasSizeBetween(1, 2);
                reads++;
            }
            assertThat(reads).as("guarded reads by _id $in in one second at 100,000 docs, against %d scans", scans)
                    .isGreaterThan(5 * Math.max(1, scans));
        }
    }

    private static void load(MongoCollection<Document> accounts, int docs) {
        List<Document> batch = new ArrayList<>();
        for (long i = accounts.countDocuments(); i < docs; i++) {
            batch.add(new Document("_id", "acc-" + i).append("balance", 1000).append("pendingTransactions", List.of()));
            if (batch.size() == 1000) {
                accounts.insertMany(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            accounts.insertMany(batch);
        }
    }

    /** Guarded updates, findOneAndUpdates and finds by _id plus conditions, per second. */
    private static double rate(MongoCollection<Document> accounts, int docs, long millis) {
        long start = System.nanoTime();
        long deadline = start + millis * 1_000_000;
        long ops = 0;
        while (System.nanoTime() < deadline) {
            String id = "acc-" + ThreadLocalRandom.current().nextInt(docs);
            Bson guard = Filters.and(Filters.eq("_id", id), Filters.gte("balance", 1), Filters.ne("pendingTransactions", "t-x"));
            switch ((int) (ops % 3)) {
                case 0 -> accounts.updateOne(guard, Updates.inc("balance", 0.0));
                case 1 -> accounts.findOneAndUpdate(guard, Updates.set("seen", ops), new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
                default -> accounts.find(guard).first();
            }
            ops++;
        }
        return ops / ((System.nanoTime() - start) / 1e9);
    }
}
