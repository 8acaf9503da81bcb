package io.mongo2pc.bench.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import org.bson.Document;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * What each clause of the library's apply filter costs the server: one client thread of
 * {@code updateOne}s by {@code _id} with the tutorial's guard, then with the library's additions
 * (the {@code $expr} write deadline, the marker cap, the lock check), alone and together.
 * Three rounds of 2 s per variant; the last round is reported.
 *
 * <pre>java -cp ... io.mongo2pc.bench.embedded.FilterCost mongodb://127.0.0.1:PORT</pre>
 * against {@code mongo2pc serve --in-memory --port PORT}.
 */
public final class FilterCost {
    private FilterCost() { }

    public static void main(String[] args) {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: FilterCost mongodb://HOST:PORT");
        }
        try (MongoClient client = MongoClients.create(args[0])) {
            MongoCollection<Document> coll = client.getDatabase("filtercost").getCollection("accounts");
            coll.drop();
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                docs.add(new Document("_id", "a" + i).append("balance", 1_000_000).append("pendingTransactions", List.of("x1", "x2")));
            }
            coll.insertMany(docs);
            Random random = new Random(42);
            String[] variants = {"tutorial", "tutorial+expr", "tutorial+cap", "tutorial+lock", "library (all)"};
            for (int round = 1; round <= 3; round++) {
                for (String variant : variants) {
                    long n = 0;
                    long end = System.nanoTime() + 2_000_000_000L;
                    while (System.nanoTime() < end) {
                        Document filter = new Document("_id", "a" + random.nextInt(1000))
                                .append("balance", new Document("$gte", 1))
                                .append("pendingTransactions", new Document("$ne", "t" + n));
                        boolean all = variant.startsWith("library");
                        if (all || variant.endsWith("expr")) {
                            filter.append("$expr", new Document("$lt", List.of("$$NOW", new Date(System.currentTimeMillis() + 60_000))));
                        }
                        if (all || variant.endsWith("cap")) {
                            filter.append("pendingTransactions.999", new Document("$exists", false));
                        }
                        if (all || variant.endsWith("lock")) {
                            filter.append("_m2pc", new Document("$exists", false));
                        }
                        coll.updateOne(filter, new Document("$inc", new Document("balance", 1)));
                        n++;
                    }
                    if (round == 3) {
                        System.out.printf(Locale.ROOT, "%-15s %,8.0f updates/s%n", variant, n / 2.0);
                    }
                }
            }
        }
    }
}
