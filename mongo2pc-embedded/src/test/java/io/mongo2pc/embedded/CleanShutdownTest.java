package io.mongo2pc.embedded;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.embedded.internal.DurableStore;
import io.mongo2pc.embedded.internal.HeldForces;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (found in review): a write whose reply was held for the disk when the server was
 * closed became durable, but its connection was closed first, so the client saw it as in doubt.
 * A clean close now lets held replies leave before it closes the connections.
 */
class CleanShutdownTest {

    @TempDir
    Path tmp;

    @Test
    void aWriteInFlightAtACleanClose_isAcknowledged_andOnDisk() throws Exception {
        Path dir = tmp.resolve("data");
        EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
        CountDownLatch forcesAllowed = new CountDownLatch(1);
        Throwable outcome = null;
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(server.uri()))
                .retryWrites(false)
                .applyToSocketSettings(b -> b.readTimeout(20, TimeUnit.SECONDS))
                .build())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");
            accounts.insertOne(new Document("_id", "a"));
            DurableStore store = server.store();
            store.beforeEachForce(HeldForces.until(forcesAllowed)); // a slow disk
            // a request being handled elsewhere: the store does not force on the write's own thread
            // (as it does for a lone request), so the write's reply waits in its connection's gate
            store.requestStarted();
            long before = store.appendedLsn();
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> accounts.insertOne(new Document("_id", "b")));
            while (store.appendedLsn() == before) {
                Thread.sleep(1); // applied in memory, its reply held
            }
            CompletableFuture<Void> close = CompletableFuture.runAsync(server::close);
            Thread.sleep(300);
            forcesAllowed.countDown();
            close.get(30, TimeUnit.SECONDS);
            store.requestFinished();
            try {
                write.get(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                outcome = e;
            }
        } finally {
            forcesAllowed.countDown();
            server.close();
        }
        assertThat(outcome).as("the write made durable by the close").isNull();
        EmbeddedServer reopened = EmbeddedServer.onDisk(dir).start();
        try (MongoClient client = MongoClients.create(reopened.uri())) {
            assertThat(client.getDatabase("bank").getCollection("accounts").countDocuments()).isEqualTo(2);
        } finally {
            reopened.close();
        }
    }
}
