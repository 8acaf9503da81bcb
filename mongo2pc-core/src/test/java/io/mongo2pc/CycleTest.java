package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import com.mongodb.client.MongoClient;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * FoundationDB's Cycle test: N documents linked in one ring; transactions rewire three links at a
 * time (a -> b -> c -> d becomes a -> c -> b -> d) from several threads, some of them killed
 * mid-way and finished by a recoverer; readers reading the whole ring as of the last committed
 * transactions must always see one ring of length N. A read that saw part of a transaction (a
 * fractured read) or an uncommitted or canceled one would see a shorter ring or a broken one.
 */
class CycleTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int N = 6;
    private static final Duration LEASE = Duration.ofMillis(400);

    static final class Killed extends RuntimeException {
        Killed() {
            super("killed", null, false, false);
        }
    }

    @Test
    void rewiringThreeLinksAtATime_withCrashes_readersAlwaysSeeOneRingOfLengthN() throws Exception {
        String db = mongo.database();
        var ring = mongo.client().getDatabase(db).getCollection("ring");
        List<DocumentRef> refs = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            ring.insertOne(new Document("_id", "r" + i).append("next", "r" + (i + 1) % N));
            refs.add(DocumentRef.of(db, "ring", "r" + i));
        }
        AtomicBoolean running = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> broken = new ConcurrentLinkedQueue<>();
        AtomicInteger reads = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger killed = new AtomicInteger();
        AtomicInteger unanswered = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch writersDone = new CountDownLatch(3);

        // Readers: the whole ring at one moment, as of the last committed transactions.
        for (int r = 0; r < 2; r++) {
            TransactionManager reader = manager(db, "reader" + r, mongo.newClient(), CrashHook.NONE);
            threads.add(new Thread(() -> {
                while (running.get()) {
                    List<Optional<Document>> docs;
                    try {
                        docs = reader.readCommitted(refs);
                    } catch (TransactionException e) {
                        // No consistent cut within the read's time (a loaded machine, writers stalled
                        // mid-way): a refusal to answer, not a broken ring; it read again.
                        unanswered.incrementAndGet();
                        continue;
                    }
                    String problem = checkRing(docs);
                    reads.incrementAndGet();
                    if (problem != null) {
                        broken.add(problem);
                    }
                }
            }));
        }
        // Writers: rewire; about one in eight is killed at a random crash point.
        for (int w = 0; w < 3; w++) {
            SplittableRandom random = new SplittableRandom(w);
            MongoClient client = mongo.newClient();
            TransactionManager planner = manager(db, "planner" + w, client, CrashHook.NONE);
            threads.add(new Thread(() -> {
                try {
                    // 25 rewires each, and more (up to 200) while fewer than 11 committed: on a loaded
                    // machine, leases and conflict timeouts of a few hundred ms cancel many.
                    for (int k = 0; k < 25 || (done.get() <= 10 && k < 200); k++) {
                        int kill = random.nextInt(8) == 0 ? random.nextInt(12) : -1;
                        AtomicInteger reached = new AtomicInteger();
                        TransactionManager writer = manager(db, "writer", client, (p, id) -> {
                            if (reached.getAndIncrement() == kill) {
                                throw new Killed();
                            }
                        });
                        List<Optional<Document>> now;
                        try {
                            now = planner.readCommitted(refs);
                        } catch (TransactionException e) {
                            unanswered.incrementAndGet(); // as a reader's: no rewire planned this time
                            continue;
                        }
                        String a = "r" + random.nextInt(N);
                        String b = next(now, a);
                        String c = next(now, b);
                        String d = next(now, c);
                        try {
                            TransactionOutcome outcome = writer.run(List.of(
                                    Operation.update(DocumentRef.of(db, "ring", a), set(c), new Document("next", b)),
                                    Operation.update(DocumentRef.of(db, "ring", c), set(b), new Document("next", d)),
                                    Operation.update(DocumentRef.of(db, "ring", b), set(d), new Document("next", c))));
                            if (outcome.isDone()) {
                                done.incrementAndGet();
                            }
                        } catch (Killed | LeaseLostException e) {
                            killed.incrementAndGet();
                        }
                    }
                } finally {
                    writersDone.countDown();
                }
            }));
        }
        // A recoverer finishes what the killed writers left, once their leases run out.
        TransactionManager recoverer = manager(db, "recoverer", mongo.newClient(), CrashHook.NONE);
        threads.add(new Thread(() -> {
            while (running.get()) {
                recoverer.recover(Duration.ZERO);
                sleep(50);
            }
        }));
        threads.forEach(Thread::start);
        assertThat(writersDone.await(120, TimeUnit.SECONDS)).isTrue();
        long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (mongo.client().getDatabase(db).getCollection("transactions")
                .countDocuments(new Document("state", new Document("$in", List.of("pending", "applied", "canceling")))) > 0
                && System.nanoTime() < settle) {
            sleep(50);
        }
        running.set(false);
        for (Thread t : threads) {
            t.join(30_000);
        }

        assertThat(broken).as("rings seen broken (of %s reads)", reads.get()).isEmpty();
        assertThat(reads.get()).isGreaterThan(20);
        assertThat(done.get()).as("rewires committed").isGreaterThan(10);
        assertThat(checkRing(recoverer.readCommitted(refs))).isNull();
        System.out.printf("cycle: %d reads (%d not answered in time), %d rewires committed, %d writers killed%n",
                reads.get(), unanswered.get(), done.get(), killed.get());
    }

    /** Null if {@code docs} form one ring through all N documents; otherwise what is wrong. */
    private static String checkRing(List<Optional<Document>> docs) {
        Set<String> seen = new HashSet<>();
        String at = "r0";
        for (int i = 0; i < N; i++) {
            if (!seen.add(at)) {
                return "ring of length " + i + " through " + seen + ": " + docs;
            }
            at = next(docs, at);
            if (at == null) {
                return "a link leads nowhere: " + docs;
            }
        }
        return at.equals("r0") ? null : "not back at r0 after " + N + " links: " + docs;
    }

    private static String next(List<Optional<Document>> docs, String id) {
        Optional<Document> doc = docs.get(Integer.parseInt(id.substring(1)));
        return doc.map(d -> d.getString("next")).orElse(null);
    }

    private static Document set(String next) {
        return new Document("$set", new Document("next", next));
    }

    private static TransactionManager manager(String db, String app, MongoClient client, CrashHook hook) {
        return TestManagers.builder(client, db, app).twoRoundCommit(false).finishInBackground(false).lease(LEASE)
                .maxClockSkew(Duration.ofMillis(100)).conflictTimeout(Duration.ofMillis(300)).crashHook(hook).build();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
