package io.mongo2pc.embedded.internal;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import de.bwaldvogel.mongo.MongoServer;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Replies wait for the disk without blocking the server's threads (see {@link ReplyGate}): a
 * write is not acknowledged, and nobody reads it, before the force that covers it returns; if
 * that force fails, the write is never acknowledged. The forces are held back or failed through
 * the store's test hook, over the real driver and upstream's wire protocol. The server runs one
 * event loop, which every connection shares.
 */
class DurableRepliesTest {

    @TempDir
    Path tmp;

    private DurableStore store;
    private MongoServer server;
    private String uri;
    private MongoClient client;
    private MongoCollection<Document> accounts;
    private final CountDownLatch forcesAllowed = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        store = DurableStore.open(tmp.resolve("data"), DurableStore.DEFAULT_COMPACT_THRESHOLD);
        server = new MongoServer(DurableBackend.onDisk(store));
        server.bind(new InetSocketAddress("127.0.0.1", 0), 0, 1);
        uri = "mongodb://127.0.0.1:" + server.getLocalAddress().getPort();
        client = newClient();
        accounts = client.getDatabase("bank").getCollection("accounts");
        accounts.insertOne(new Document("_id", "a").append("balance", 100));
        // a request being handled elsewhere: the store does not force on a request's own thread (as
        // it does for a lone request), so every reply here waits in its connection's gate
        store.requestStarted();
    }

    @AfterEach
    void stop() {
        forcesAllowed.countDown();
        store.requestFinished();
        client.close();
        server.shutdownNow();
        store.close();
    }

    @Test
    void aWrite_isAcknowledgedOnlyOnceItsForceReturns() throws Exception {
        holdForces();
        CompletableFuture<Void> write = CompletableFuture.runAsync(
                () -> accounts.insertOne(new Document("_id", "b").append("balance", 5)));

        Thread.sleep(500);
        assertThat(write).as("insert acknowledged while its force is held back").isNotDone();

        forcesAllowed.countDown();
        write.get(10, TimeUnit.SECONDS);
        assertThat(store.isDurable(store.appendedLsn())).isTrue();
    }

    @Test
    void aReadOfAWriteNotYetOnDisk_waitsForTheForce_whileOtherConnectionsAreServed() throws Exception {
        holdForces();
        long before = store.appendedLsn();
        CompletableFuture<Void> write = CompletableFuture.runAsync(
                () -> accounts.updateOne(new Document("_id", "a"), new Document("$inc", new Document("balance", -30))));
        while (store.appendedLsn() == before) {
            Thread.sleep(1); // applied in memory, not yet on disk
        }
        try (MongoClient other = newClient()) {
            CompletableFuture<Document> read = CompletableFuture.supplyAsync(
                    () -> other.getDatabase("bank").getCollection("accounts").find(new Document("_id", "a")).first());
            Thread.sleep(500);
            assertThat(read).as("read of a change not yet on disk").isNotDone();
            assertThat(write).isNotDone();

            forcesAllowed.countDown();
            write.get(10, TimeUnit.SECONDS);
            assertThat(read.get(10, TimeUnit.SECONDS).getInteger("balance")).isEqualTo(70);
        }
    }

    @Test
    void aWriteWhoseForceFails_isNeverAcknowledged() {
        store.beforeEachForce(() -> {
            throw new UncheckedIOException(new IOException("disk gone (test)"));
        });

        assertThatThrownBy(() -> accounts.insertOne(new Document("_id", "c").append("balance", 1)))
                .isInstanceOf(MongoException.class);
        assertThatThrownBy(() -> accounts.find(new Document("_id", "a")).first())
                .as("the server refuses requests once its log failed")
                .isInstanceOf(MongoException.class);
    }

    private void holdForces() {
        store.beforeEachForce(HeldForces.until(forcesAllowed));
    }

    private MongoClient newClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .retryWrites(false)
                .retryReads(false)
                .applyToSocketSettings(b -> b.readTimeout(20, TimeUnit.SECONDS))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(3, TimeUnit.SECONDS))
                .build());
    }
}
