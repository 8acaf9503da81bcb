package io.mongo2pc.bench.client;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code readCommitted(List)} of every account while writers move money between them: how many
 * reads per second readers finish, how long one takes, and whether every view conserves the total
 * (a fractured read would not). Run against a server in its own process:
 *
 * <pre>
 * java -jar mongo2pc-cli/target/mongo2pc.jar serve --in-memory --port 27999 &amp;
 * CP="mongo2pc-bench/target/mongo2pc-bench-0.1.0-SNAPSHOT.jar:$(cat mongo2pc-bench/target/classpath.txt)"
 * java -cp "$CP" io.mongo2pc.bench.client.ReadCommittedUnderLoad mongodb://127.0.0.1:27999 30 8 8 4
 * </pre>
 * Arguments: URI, seconds, writer threads, accounts, reader threads. A database of its own per run.
 */
public final class ReadCommittedUnderLoad {
    private ReadCommittedUnderLoad() { }

    public static void main(String[] args) throws Exception {
        String uri = args.length > 0 ? args[0] : "mongodb://127.0.0.1:27999";
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        int writers = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        int accounts = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        int readers = args.length > 4 ? Integer.parseInt(args[4]) : 4;
        String db = "rcload" + System.currentTimeMillis();
        long start = 1_000L;
        try (MongoClient client = MongoClients.create(uri)) {
            MongoCollection<Document> coll = client.getDatabase(db).getCollection("accounts");
            List<DocumentRef> refs = new ArrayList<>();
            for (int i = 0; i < accounts; i++) {
                coll.insertOne(new Document("_id", "a" + i).append("balance", start).append("pendingTransactions", List.of()));
                refs.add(DocumentRef.of(db, "accounts", "a" + i));
            }
            long total = start * accounts;
            TransactionManager tm = TransactionManager.builder().target("default", client).database(db).application("load").build();
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong committed = new AtomicLong();
            AtomicLong reads = new AtomicLong();
            AtomicLong readNanos = new AtomicLong();
            AtomicLong maxReadNanos = new AtomicLong();
            AtomicLong fractured = new AtomicLong();
            Map<String, AtomicLong> failures = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                SplittableRandom random = new SplittableRandom(w);
                threads.add(new Thread(() -> {
                    while (running.get()) {
                        int a = random.nextInt(accounts);
                        int b = (a + 1 + random.nextInt(accounts - 1)) % accounts;
                        long amount = 1 + random.nextInt(20);
                        try {
                            if (tm.run(List.of(
                                    Operation.increment(refs.get(a), "balance", -amount, new Document("balance", new Document("$gte", amount))),
                                    Operation.increment(refs.get(b), "balance", amount, null))).isCommitted()) {
                                committed.incrementAndGet();
                            }
                        } catch (RuntimeException e) {
                            failures.computeIfAbsent("writer " + e.getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
                        }
                    }
                }));
            }
            for (int r = 0; r < readers; r++) {
                threads.add(new Thread(() -> {
                    while (running.get()) {
                        long t0 = System.nanoTime();
                        try {
                            List<Optional<Document>> views = tm.readCommitted(refs);
                            long took = System.nanoTime() - t0;
                            reads.incrementAndGet();
                            readNanos.addAndGet(took);
                            maxReadNanos.accumulateAndGet(took, Math::max);
                            long sum = 0;
                            for (Optional<Document> view : views) {
                                sum += ((Number) view.orElseThrow().get("balance")).longValue();
                            }
                            if (sum != total) {
                                fractured.incrementAndGet();
                            }
                        } catch (RuntimeException e) {
                            failures.computeIfAbsent("reader " + e.getClass().getSimpleName() + ": "
                                    + String.valueOf(e.getMessage()).replaceAll("[0-9a-f]{24}", "<id>"), k -> new AtomicLong()).incrementAndGet();
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            running.set(false);
            for (Thread t : threads) {
                t.join();
            }
            double elapsed = (System.nanoTime() - t0) / 1e9;
            System.out.printf("writers %d, accounts %d, readers %d, %.1f s%n", writers, accounts, readers, elapsed);
            System.out.printf("committed transfers: %d (%.0f/s)%n", committed.get(), committed.get() / elapsed);
            System.out.printf("reads: %d (%.1f/s), mean %.2f ms, max %.0f ms, fractured %d%n", reads.get(), reads.get() / elapsed,
                    reads.get() == 0 ? 0.0 : readNanos.get() / 1e6 / reads.get(), maxReadNanos.get() / 1e6, fractured.get());
            failures.forEach((what, n) -> System.out.println("failures: " + n + " x " + what));
            client.getDatabase(db).drop();
        }
    }
}
