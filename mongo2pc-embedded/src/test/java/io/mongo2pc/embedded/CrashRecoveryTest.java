package io.mongo2pc.embedded;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kill -9 loop: a server in its own JVM on a data folder, writer threads doing acknowledged inserts
 * and increments, SIGKILL at random moments, restart on the same folder, verify, repeat.
 *
 * <p>Writer {@code w} inserts {@code w-i} and then increments {@code counter-w} to {@code i + 1}.
 * After every restart: every acknowledged insert is there, every counter is at least its last
 * acknowledged value, and the data is one point in time of each writer's history: counter
 * {@code n} means exactly {@code w-0..w-(n-1)} exist, plus at most {@code w-n} (inserted, its
 * increment lost), and nothing beyond.
 */
@Tag("slow")
class CrashRecoveryTest {

    private static final int WRITERS = 4;
    private static final int CRASHES = 14;

    @TempDir
    Path dir;

    /** What writer w has seen acknowledged; written by the writer thread only. */
    static final class Acked {
        volatile long insertedUpTo = -1;
        volatile long counter;
        volatile long attemptedInsert = -1;
        volatile AssertionError failure;
    }

    @Test
    void killDashNineAtRandomMoments_keepsEveryAcknowledgedWriteAndAConsistentPoint() throws Exception {
        Random random = new Random();
        Acked[] acked = new Acked[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            acked[w] = new Acked();
        }
        long totalAcked = 0;
        for (int crash = 0; crash <= CRASHES; crash++) {
            ServerProcess server = ServerProcess.start("--data", dir.toString());
            String uri = server.uri + "/?retryWrites=false&serverSelectionTimeoutMS=3000&connectTimeoutMS=2000";
            try (MongoClient client = MongoClients.create(uri)) {
                totalAcked = verify(client, acked, crash);
            } catch (Throwable t) {
                server.kill();
                throw t;
            }
            if (crash == CRASHES) {
                server.close();
                break;
            }
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            List<MongoClient> clients = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                MongoClient client = MongoClients.create(uri);
                clients.add(client);
                int writer = w;
                Thread thread = new Thread(() -> write(client, writer, acked[writer], stop), "writer-" + w);
                thread.start();
                writers.add(thread);
            }
            // Kill at a random moment once this round's writers got going: a fixed pause alone left
            // some rounds on a loaded machine without a single acknowledged write (nothing tested).
            long roundStart = acknowledged(acked);
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (acknowledged(acked) < roundStart + 20 && System.nanoTime() < deadline && writers.stream().anyMatch(Thread::isAlive)) {
                Thread.sleep(10);
            }
            assertThat(acknowledged(acked)).as("writes acknowledged within a minute of round %d's start", crash)
                    .isGreaterThanOrEqualTo(roundStart + 20);
            Thread.sleep(random.nextInt(1500));
            server.kill();
            stop.set(true);
            for (Thread thread : writers) {
                thread.join(30_000);
            }
            clients.forEach(MongoClient::close);
            for (Acked a : acked) {
                if (a.failure != null) {
                    throw a.failure;
                }
            }
        }
        System.out.println("acknowledged writes at the end: " + totalAcked);
        assertThat(totalAcked).as("the writers made progress").isGreaterThan(CRASHES * 20L);
    }

    private static long acknowledged(Acked[] acked) {
        long sum = 0;
        for (Acked a : acked) {
            sum += a.counter;
        }
        return sum;
    }

    private static void write(MongoClient client, int writer, Acked acked, AtomicBoolean stop) {
        MongoCollection<Document> docs = client.getDatabase("crash").getCollection("docs");
        MongoCollection<Document> counters = client.getDatabase("crash").getCollection("counters");
        try {
            while (!stop.get()) {
                long i = acked.counter;
                acked.attemptedInsert = Math.max(acked.attemptedInsert, i);
                try {
                    docs.insertOne(new Document("_id", writer + "-" + i).append("writer", writer).append("i", i));
                } catch (MongoWriteException e) {
                    if (e.getError().getCategory() != ErrorCategory.DUPLICATE_KEY) {
                        throw e;
                    }
                    // inserted before the last crash, its increment lost: fine, go on with the increment
                }
                acked.insertedUpTo = i;
                Document counter = counters.findOneAndUpdate(Filters.eq("_id", "counter-" + writer), Updates.inc("n", 1L),
                        new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
                assertThat(counter.getLong("n")).isEqualTo(i + 1);
                acked.counter = i + 1;
            }
        } catch (RuntimeException e) {
            // the server was killed under us: what was acknowledged so far is recorded in acked
        } catch (AssertionError e) {
            acked.failure = e;
        }
    }

    private static long verify(MongoClient client, Acked[] acked, int restart) {
        MongoCollection<Document> docs = client.getDatabase("crash").getCollection("docs");
        MongoCollection<Document> counters = client.getDatabase("crash").getCollection("counters");
        long total = 0;
        for (int w = 0; w < acked.length; w++) {
            Document counter = counters.find(Filters.eq("_id", "counter-" + w)).first();
            long n = counter == null ? 0 : counter.getLong("n");
            Set<Long> present = new HashSet<>();
            for (Document d : docs.find(Filters.eq("writer", w))) {
                present.add(((Number) d.get("i")).longValue());
            }
            String where = "after restart " + restart + ", writer " + w + " (counter " + n + ", acked counter "
                    + acked[w].counter + ", acked inserts up to " + acked[w].insertedUpTo + ")";
            // every acknowledged write is there
            assertThat(n).as("acknowledged increment lost " + where).isGreaterThanOrEqualTo(acked[w].counter);
            for (long i = 0; i <= acked[w].insertedUpTo; i++) {
                assertThat(present).as("acknowledged insert " + i + " lost " + where).contains(i);
            }
            // one consistent point: counter n means inserts 0..n-1 exist, at most insert n beyond them
            for (long i = 0; i < n; i++) {
                assertThat(present).as("insert " + i + " missing although counter survived " + where).contains(i);
            }
            assertThat(present).as("documents beyond the counter " + where).allMatch(i -> i <= n);
            assertThat(n).as("a write nobody attempted " + where).isLessThanOrEqualTo(acked[w].attemptedInsert + 1);
            // the writers continue from what survived
            acked[w].counter = n;
            total += n;
        }
        return total;
    }
}
