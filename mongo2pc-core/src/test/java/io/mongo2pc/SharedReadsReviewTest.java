package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.CommandsTo;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** Review of reads by id shared between threads (DocumentsById): each case fails on the merged change. */
class SharedReadsReviewTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void readCommitted_documentWithDecimal128Id_askedByTheSameNumber_isFound() {
        // given a document stored with _id NumberDecimal(7), which MongoDB matches to the number 7
        String db = mongo.database();
        MongoCollection<Document> dec = mongo.client().getDatabase(db).getCollection("dec");
        dec.insertOne(new Document("_id", new Decimal128(7)).append("balance", 100L));
        assertThat(dec.find(new Document("_id", 7L)).first()).as("MongoDB matches 7L to NumberDecimal(7)").isNotNull();
        TransactionManager manager = TestManagers.builder(mongo.client(), db, "dec").build();
        DocumentRef ref = DocumentRef.of(db, "dec", 7L);

        // when it is read by 7L / then it is there, as a plain read finds it
        assertThat(manager.read(ref)).as("plain read").isPresent();
        assertThat(manager.readCommitted(ref)).as("readCommitted(ref)").isPresent();
        assertThat(manager.readCommitted(List.of(ref)).get(0)).as("readCommitted(List)").isPresent();
    }

    @Test
    void readCommitted_documentWithLargeWholeDoubleId_askedByTheSameLong_isFound() {
        // given a document stored with _id 2^60 as a double, which MongoDB matches to the long 2^60
        String db = mongo.database();
        MongoCollection<Document> big = mongo.client().getDatabase(db).getCollection("big");
        big.insertOne(new Document("_id", (double) (1L << 60)).append("balance", 100L));
        assertThat(big.find(new Document("_id", 1L << 60)).first()).as("MongoDB matches").isNotNull();
        TransactionManager manager = TestManagers.builder(mongo.client(), db, "big").build();
        DocumentRef ref = DocumentRef.of(db, "big", 1L << 60);

        assertThat(manager.read(ref)).as("plain read").isPresent();
        assertThat(manager.readCommitted(ref)).as("readCommitted(ref)").isPresent();
        assertThat(manager.readCommitted(List.of(ref)).get(0)).as("readCommitted(List)").isPresent();
    }

    @Test
    void readCommitted_carriedInAnInterruptedThreadsRequest_isNotFailedByThatInterrupt() throws Exception {
        // given documents x, y and hold; finds of hold wait for a latch; one combined request out at a time
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("things").insertMany(List.of(
                new Document("_id", "x").append("balance", 1L), new Document("_id", "y").append("balance", 2L),
                new Document("_id", "hold").append("balance", 3L)));
        AtomicReference<CountDownLatch> holding = new AtomicReference<>();
        AtomicReference<CountDownLatch> release = new AtomicReference<>();
        try (MongoClient client = CommandsTo.client(mongo.uri(), "things", (name, command) -> {
            if (!name.equals("find")) {
                return;
            }
            String filter = command.get("filter").toString();
            if (filter.contains("\"hold\"")) {
                holding.get().countDown();
                try {
                    release.get().await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        })) {
            TransactionManager manager = TestManagers.builder(client, db, "intr").combinedRequestsInFlight(1).build();
            DocumentRef x = DocumentRef.of(db, "things", "x");
            DocumentRef y = DocumentRef.of(db, "things", "y");
            DocumentRef hold = DocumentRef.of(db, "things", "hold");
            for (int round = 0; round < 10; round++) {
                holding.set(new CountDownLatch(1));
                release.set(new CountDownLatch(1));
                AtomicReference<Object> bGot = new AtomicReference<>();
                Thread h = new Thread(() -> manager.readCommitted(hold));
                h.start();
                assertThat(holding.get().await(10, TimeUnit.SECONDS)).isTrue();
                // when B queues behind the held request, then A, whose thread is interrupted (its caller gave up on it)
                Thread b = new Thread(() -> {
                    try {
                        bGot.set(manager.readCommitted(x));
                    } catch (RuntimeException e) {
                        bGot.set(e);
                    }
                });
                b.start();
                awaitIn(b, "submit");
                Thread a = new Thread(() -> {
                    Thread.currentThread().interrupt();
                    try {
                        manager.readCommitted(y);
                    } catch (RuntimeException e) {
                        // A's own failure: its thread was interrupted
                    }
                });
                a.start();
                awaitIn(a, "submit");
                release.get().countDown();
                h.join(10_000);
                a.join(10_000);
                b.join(10_000);
                // then B, which nobody interrupted, reads its document (whoever carried its find)
                assertThat(bGot.get()).as("round %d: B's read, queued beside interrupted A's", round).isInstanceOf(Optional.class);
            }
        }
    }

    @Test
    void readCommitted_ofOneDocument_doesNotWaitForAnUnrelatedHeldFindOfTheCollection() throws Exception {
        // given default settings, and finds of the collection that got slow for a while (a busy server)
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("hol").insertMany(List.of(
                new Document("_id", "x").append("balance", 1L), new Document("_id", "slowish").append("balance", 2L),
                new Document("_id", "hold").append("balance", 3L)));
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (MongoClient client = CommandsTo.client(mongo.uri(), "hol", (name, command) -> {
            if (!name.equals("find")) {
                return;
            }
            String filter = command.get("filter").toString();
            try {
                if (filter.contains("\"slowish\"")) {
                    Thread.sleep(60);
                }
                if (filter.contains("\"hold\"")) {
                    holding.countDown();
                    release.await(20, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })) {
            TransactionManager manager = TestManagers.builder(client, db, "hol").build();
            DocumentRef x = DocumentRef.of(db, "hol", "x");
            for (int i = 0; i < 5; i++) {
                manager.readCommitted(x);
            }
            for (int i = 0; i < 20; i++) {
                manager.readCommitted(DocumentRef.of(db, "hol", "slowish"));
            }
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                // when one find of the collection is held (a slow query, a stalled connection)
                pool.submit(() -> manager.readCommitted(DocumentRef.of(db, "hol", "hold")));
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                // then a read of another document of it does not wait for that find
                long start = System.nanoTime();
                Future<Optional<Document>> other = pool.submit(() -> manager.readCommitted(x));
                try {
                    other.get(3, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    // falls through to the assertion
                }
                assertThat(other.isDone()).as("read of x done within 3 s while an unrelated find is held (waited %d ms)",
                        (System.nanoTime() - start) / 1_000_000).isTrue();
            } finally {
                release.countDown();
                pool.shutdown();
                pool.awaitTermination(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void readCommitted_ofAnInterruptedThread_waitingForAHeldFind_doesNotSpin() throws Exception {
        // given a find of the collection held, one combined request out at a time
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("spin").insertMany(List.of(
                new Document("_id", "y").append("balance", 2L), new Document("_id", "hold").append("balance", 3L)));
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (MongoClient client = CommandsTo.client(mongo.uri(), "spin", (name, command) -> {
            if (name.equals("find") && command.get("filter").toString().contains("\"hold\"")) {
                holding.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        })) {
            TransactionManager manager = TestManagers.builder(client, db, "spin").combinedRequestsInFlight(1).build();
            Thread h = new Thread(() -> manager.readCommitted(DocumentRef.of(db, "spin", "hold")));
            h.start();
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            // when a thread whose interrupt flag is set reads another document and waits behind it for a second
            Thread a = new Thread(() -> {
                Thread.currentThread().interrupt();
                try {
                    manager.readCommitted(DocumentRef.of(db, "spin", "y"));
                } catch (RuntimeException e) {
                    // its own failure
                }
            });
            a.start();
            awaitIn(a, "submit");
            java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
            long before = cpu.getThreadCpuTime(a.getId());
            Thread.sleep(1_000); // the held second whose CPU is measured
            long spent = cpu.getThreadCpuTime(a.getId()) - before;
            release.countDown();
            h.join(10_000);
            a.join(10_000);
            // then it waited without burning a core
            assertThat(spent / 1_000_000).as("CPU ms the waiting thread used in one held second").isLessThan(200);
        }
    }

    /** Waits until {@code t} is inside a method named {@code method} of the Batcher (condition, not time). */
    private static void awaitIn(Thread t, String method) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            if (Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().endsWith("wire.Batcher") && f.getMethodName().equals(method))) {
                return;
            }
            Thread.sleep(1);
        }
        throw new AssertionError(t + " never reached Batcher." + method);
    }
}
