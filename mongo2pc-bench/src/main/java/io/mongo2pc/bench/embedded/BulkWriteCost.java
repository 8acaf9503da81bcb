package io.mongo2pc.bench.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import org.bson.Document;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Document writes per second that a server takes in bulk requests, from several client threads:
 * either simple {@code $inc}s by {@code _id} ({@code simple}) or pairs shaped like the library's
 * apply and release ({@code library}: the guarded, fenced {@code $inc} + {@code $push} of a
 * marker, then its {@code $pull}). Warms up for half the time, then measures; prints one line.
 * {@code scripts/server-cpu-per-write.sh} runs it against a fresh server and adds the server's
 * CPU time per document.
 *
 * <pre>java -cp ... io.mongo2pc.bench.embedded.BulkWriteCost URI THREADS WRITES_PER_REQUEST SECONDS simple|library</pre>
 */
public final class BulkWriteCost {
    private BulkWriteCost() { }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 5 || !List.of("simple", "library").contains(args[4])) {
            throw new IllegalArgumentException("usage: BulkWriteCost URI THREADS WRITES_PER_REQUEST SECONDS simple|library");
        }
        int threads = Integer.parseInt(args[1]);
        int perRequest = Integer.parseInt(args[2]);
        int seconds = Integer.parseInt(args[3]);
        boolean library = args[4].equals("library");
        try (MongoClient client = MongoClients.create(args[0])) {
            MongoCollection<Document> coll = client.getDatabase("bulkwritecost_" + System.nanoTime()).getCollection("accounts");
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                docs.add(new Document("_id", "a" + i).append("balance", 1_000_000_000L).append("pendingTransactions", new ArrayList<>()));
            }
            coll.insertMany(docs);
            AtomicLong written = new AtomicLong();
            AtomicBoolean measuring = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            for (int t = 0; t < threads; t++) {
                pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (!stop.get()) {
                        List<WriteModel<Document>> writes = new ArrayList<>();
                        for (int j = 0; j < perRequest; j++) {
                            writes.addAll(writes(library, "a" + random.nextInt(1000), "t" + random.nextLong()));
                        }
                        if (writes.size() == 1) {
                            UpdateOneModel<Document> only = (UpdateOneModel<Document>) writes.get(0);
                            coll.updateOne(only.getFilter(), only.getUpdate());
                        } else {
                            coll.bulkWrite(writes, new BulkWriteOptions().ordered(false));
                        }
                        if (measuring.get()) {
                            written.addAndGet(writes.size());
                        }
                    }
                    return null;
                });
            }
            Thread.sleep(seconds * 500L);
            measuring.set(true);
            long start = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            long count = written.get();
            double elapsed = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            pool.shutdown();
            pool.awaitTermination(30, TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "%s: %d threads, %d per request: %.0f document writes/s%n",
                    args[4], threads, perRequest, count / elapsed);
        }
    }

    private static List<UpdateOneModel<Document>> writes(boolean library, String id, String tx) {
        if (!library) {
            return List.of(new UpdateOneModel<>(new Document("_id", id), new Document("$inc", new Document("balance", 1))));
        }
        Document apply = new Document("_id", id)
                .append("$expr", new Document("$lt", List.of("$$NOW", new Date(System.currentTimeMillis() + 60_000))))
                .append("pendingTransactions", new Document("$ne", tx))
                .append("pendingTransactions.999", new Document("$exists", false))
                .append("balance", new Document("$gte", 1))
                .append("_m2pc", new Document("$exists", false));
        return List.of(
                new UpdateOneModel<>(apply, new Document("$inc", new Document("balance", -1))
                        .append("$push", new Document("pendingTransactions", tx))),
                new UpdateOneModel<>(new Document("_id", id).append("pendingTransactions", tx),
                        new Document("$pull", new Document("pendingTransactions", tx))));
    }
}
