package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Writers keep fields {@code a} and {@code b} equal in every update; readers on their own
 * connections check that every document they get (from find, and as returned by
 * findOneAndUpdate) has a == b.
 */
class TornReadTest {

    private static final int DOCS = 4;
    private static final int FILLER_FIELDS = 200;
    private static final long MIN_READS = 1_000;

    @TempDir
    Path dir;

    @Test
    void inMemory_concurrentUpdatesAndReads_noTornDocument() throws Exception {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start()) {
            Result result = probe(server.uri(), Duration.ofSeconds(4));
            assertThat(result.reads).isGreaterThanOrEqualTo(MIN_READS);
            assertThat(result.torn).as("torn reads out of %d (first: %s)", result.reads, result.example).isZero();
        }
    }

    @Test
    void onDisk_concurrentUpdatesAndReads_noTornDocument() throws Exception {
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start()) {
            Result result = probe(server.uri(), Duration.ofSeconds(3));
            assertThat(result.reads).isGreaterThanOrEqualTo(MIN_READS);
            assertThat(result.torn).as("torn reads out of %d (first: %s)", result.reads, result.example).isZero();
        }
    }

    /** Shows the probe catches the upstream bug; off by default (run with -Dmongo2pc.checkStock=true). */
    @Test
    void stockMemoryBackend_showsTornReads() throws Exception {
        assumeTrue(Boolean.getBoolean("mongo2pc.checkStock"), "set -Dmongo2pc.checkStock=true to run against upstream");
        MongoServer stock = new MongoServer(new MemoryBackend());
        try {
            String uri = stock.bindAndGetConnectionString();
            Result result = probe(uri, Duration.ofSeconds(4));
            assertThat(result.torn).as("torn reads out of %d", result.reads).isPositive();
        } finally {
            stock.shutdownNow();
        }
    }

    record Result(long reads, long torn, String example) {
    }

    static Result probe(String uri, Duration duration) throws Exception {
        try (MongoClient setup = MongoClients.create(uri)) {
            MongoCollection<Document> c = setup.getDatabase("torn").getCollection("docs");
            c.drop();
            for (int i = 0; i < DOCS; i++) {
                Document doc = new Document("_id", i).append("a", 0);
                for (int f = 0; f < FILLER_FIELDS; f++) {
                    doc.append("f" + f, f);
                }
                c.insertOne(doc.append("b", 0));
            }
        }
        AtomicLong reads = new AtomicLong();
        AtomicLong torn = new AtomicLong();
        List<String> examples = new ArrayList<>();
        // At least `duration`, then on until MIN_READS reads (at most a minute): on a loaded machine the
        // probe takes longer instead of failing for want of reads.
        long start = System.nanoTime();
        long minEnd = start + duration.toNanos();
        long hardEnd = start + TimeUnit.SECONDS.toNanos(60);
        java.util.function.BooleanSupplier running = () -> {
            long now = System.nanoTime();
            return now < minEnd || (reads.get() < MIN_READS && now < hardEnd);
        };
        int writers = 3;
        int readers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers + readers);
        List<MongoClient> clients = new ArrayList<>();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                MongoClient client = MongoClients.create(uri);
                clients.add(client);
                MongoCollection<Document> c = client.getDatabase("torn").getCollection("docs");
                futures.add(pool.submit(() -> {
                    while (running.getAsBoolean()) {
                        int id = ThreadLocalRandom.current().nextInt(DOCS);
                        long v = ThreadLocalRandom.current().nextLong(1_000_000);
                        Bson update = ThreadLocalRandom.current().nextBoolean()
                                ? Updates.combine(Updates.inc("a", 1), Updates.inc("b", 1))
                                : Updates.combine(Updates.set("a", v), Updates.set("b", v));
                        c.updateOne(Filters.eq("_id", id), update);
                    }
                    return null;
                }));
            }
            for (int r = 0; r < readers; r++) {
                MongoClient client = MongoClients.create(uri);
                clients.add(client);
                MongoCollection<Document> c = client.getDatabase("torn").getCollection("docs");
                boolean viaFindAndModify = r % 2 == 1;
                futures.add(pool.submit(() -> {
                    while (running.getAsBoolean()) {
                        List<Document> seen = new ArrayList<>();
                        if (viaFindAndModify) {
                            int id = ThreadLocalRandom.current().nextInt(DOCS);
                            seen.add(c.findOneAndUpdate(Filters.eq("_id", id), Updates.inc("reads", 1),
                                    new FindOneAndUpdateOptions().returnDocument(ThreadLocalRandom.current().nextBoolean()
                                            ? ReturnDocument.AFTER : ReturnDocument.BEFORE)));
                        } else {
                            c.find().into(seen);
                        }
                        for (Document d : seen) {
                            reads.incrementAndGet();
                            if (!d.get("a").equals(d.get("b"))) {
                                torn.incrementAndGet();
                                synchronized (examples) {
                                    if (examples.isEmpty()) {
                                        examples.add("a=" + d.get("a") + " b=" + d.get("b"));
                                    }
                                }
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(MongoClient::close);
        }
        Result result = new Result(reads.get(), torn.get(), examples.isEmpty() ? "none" : examples.get(0));
        System.out.println("torn-read probe on " + uri + ": " + result);
        return result;
    }
}
