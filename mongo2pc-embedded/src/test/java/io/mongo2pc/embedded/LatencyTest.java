package io.mongo2pc.embedded;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.mongo2pc.embedded.internal.DurableStore;
import io.mongo2pc.embedded.internal.HeldForces;
import org.bson.BsonBinaryWriter;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link EmbeddedServer#withLatency}: every reply leaves no sooner than the latency after its
 * request arrived, no thread waits meanwhile (so connections do not delay each other), replies of
 * one connection keep their order, and a reply that also waits for the disk leaves at whichever
 * is later.
 */
class LatencyTest {
    private static final Duration LATENCY = Duration.ofMillis(200);
    private static final long LATENCY_NANOS = LATENCY.toNanos();

    @TempDir
    Path tmp;

    @Test
    void eachRoundTrip_takesAtLeastTheLatency_andNotMuchMore() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().withLatency(LATENCY).start();
             MongoClient client = client(server, 1)) {
            MongoCollection<Document> docs = client.getDatabase("t").getCollection("docs");
            docs.insertOne(new Document("_id", 1));
            List<Long> trips = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                long t0 = System.nanoTime();
                docs.find(new Document("_id", 1)).first();
                trips.add(System.nanoTime() - t0);
            }
            assertThat(trips).allSatisfy(t -> assertThat(t).as("round trip in ns").isGreaterThanOrEqualTo(LATENCY_NANOS));
            trips.sort(null);
            // The latency added twice would make the median at least 2 x 200 ms; the margin below
            // that is for a loaded machine.
            assertThat(trips.get(trips.size() / 2)).as("median round trip in ns").isLessThan(2 * LATENCY_NANOS);
        }
    }

    @Test
    void sixtyFourConnections_waitTogether_notOneAfterAnother() throws Exception {
        int connections = 64;
        try (EmbeddedServer server = EmbeddedServer.inMemory().withLatency(LATENCY).start();
             MongoClient client = client(server, connections)) {
            MongoDatabase db = client.getDatabase("t");
            ExecutorService pool = Executors.newFixedThreadPool(connections);
            try {
                // open the connections first (untimed), then all ask at once
                roundTrips(pool, db, connections, new CyclicBarrier(connections));
                List<Long> trips = roundTrips(pool, db, connections, new CyclicBarrier(connections));
                // Were the replies waited for on the server's threads (two here), the last of the 64
                // would come after 32 x 200 ms = 6.4 s (the margin is for a loaded machine).
                assertThat(trips).allSatisfy(t -> assertThat(t).as("round trip in ns")
                        .isGreaterThanOrEqualTo(LATENCY_NANOS).isLessThan(LATENCY_NANOS + 2_000_000_000L));
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static List<Long> roundTrips(ExecutorService pool, MongoDatabase db, int n, CyclicBarrier start) throws Exception {
        List<Future<Long>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(pool.submit(() -> {
                start.await(10, TimeUnit.SECONDS);
                long t0 = System.nanoTime();
                db.runCommand(new Document("ping", 1));
                return System.nanoTime() - t0;
            }));
        }
        List<Long> trips = new ArrayList<>();
        for (Future<Long> f : futures) {
            trips.add(f.get(30, TimeUnit.SECONDS));
        }
        return trips;
    }

    @Test
    void pipelinedRequestsOnOneConnection_areAnsweredInOrder() throws Exception {
        try (EmbeddedServer server = EmbeddedServer.inMemory().withLatency(LATENCY).start();
             Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            long t0 = System.nanoTime();
            for (int id = 1; id <= 5; id++) {
                out.write(opMsg(id, new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin"))));
            }
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            List<Integer> answered = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                byte[] header = new byte[16];
                in.readFully(header);
                ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                int length = h.getInt(0);
                answered.add(h.getInt(8)); // responseTo
                in.readFully(new byte[length - 16]);
            }
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(LATENCY_NANOS);
            assertThat(answered).containsExactly(1, 2, 3, 4, 5);
        }
    }

    /** An OP_MSG (opcode 2013) with one body section. */
    private static byte[] opMsg(int requestId, BsonDocument body) {
        BasicOutputBuffer bson = new BasicOutputBuffer();
        new BsonDocumentCodec().encode(new BsonBinaryWriter(bson), body, EncoderContext.builder().build());
        byte[] doc = bson.toByteArray();
        ByteBuffer msg = ByteBuffer.allocate(16 + 4 + 1 + doc.length).order(ByteOrder.LITTLE_ENDIAN);
        msg.putInt(msg.capacity()).putInt(requestId).putInt(0).putInt(2013).putInt(0).put((byte) 0).put(doc);
        return msg.array();
    }

    @Test
    void onDisk_aReplyLeavesAtTheLaterOfDurableAndDue() throws Exception {
        try (EmbeddedServer server = EmbeddedServer.onDisk(tmp.resolve("data")).withLatency(LATENCY).start();
             MongoClient client = client(server, 1)) {
            MongoCollection<Document> docs = client.getDatabase("t").getCollection("docs");
            docs.insertOne(new Document("_id", 0));
            long t0 = System.nanoTime();
            docs.insertOne(new Document("_id", 1));
            assertThat(System.nanoTime() - t0).as("a durable write's round trip").isGreaterThanOrEqualTo(LATENCY_NANOS);

            DurableStore store = server.store();
            CountDownLatch forcesAllowed = new CountDownLatch(1);
            store.beforeEachForce(HeldForces.until(forcesAllowed)); // a disk slower than the latency
            store.requestStarted(); // as if another request ran: the reply waits in the gates, not on the event loop
            try {
                CompletableFuture<Void> write = CompletableFuture.runAsync(() -> docs.insertOne(new Document("_id", 2)));
                Thread.sleep(4 * LATENCY.toMillis());
                assertThat(write).as("acknowledged when due, before its force returned").isNotDone();
                forcesAllowed.countDown();
                write.get(10, TimeUnit.SECONDS);
            } finally {
                forcesAllowed.countDown();
                store.requestFinished();
            }
        }
    }

    @Test
    void aLatencyBelowZeroOrAboveFiveSeconds_isRefused() {
        assertThatThrownBy(() -> EmbeddedServer.inMemory().withLatency(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
        assertThatThrownBy(() -> EmbeddedServer.inMemory().withLatency(Duration.ofSeconds(6)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 5s");
        assertThat(EmbeddedServer.inMemory().withLatency(Duration.ZERO).latency()).isZero();
    }

    private static MongoClient client(EmbeddedServer server, int poolSize) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(server.uri()))
                .applyToConnectionPoolSettings(b -> b.maxSize(poolSize).minSize(0))
                .build());
    }
}
