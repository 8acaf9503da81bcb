package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The server's explicit settings: each keeps the others, refuses what it cannot mean, and is used. */
class ServerSettingsTest {

    @Test
    void defaults_areTheDocumentedOnes() {
        EmbeddedServer server = EmbeddedServer.inMemory();
        assertThat(server.workerThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(server.commitDelay()).isEqualTo(Duration.ofNanos(200_000));
        assertThat(server.maxConcurrentForces()).isEqualTo(4);
        assertThat(server.latency()).isZero();
    }

    @Test
    void eachSetting_keepsTheOthers() {
        EmbeddedServer all = EmbeddedServer.inMemory()
                .withWorkerThreads(3)
                .withCommitDelay(Duration.ZERO)
                .withMaxConcurrentForces(2)
                .withLatency(Duration.ofMillis(1));
        assertSettings(all, 3, Duration.ZERO, 2, Duration.ofMillis(1));
        assertSettings(all.withWorkerThreads(5), 5, Duration.ZERO, 2, Duration.ofMillis(1));
        assertSettings(all.withCommitDelay(Duration.ofMillis(3)), 3, Duration.ofMillis(3), 2, Duration.ofMillis(1));
        assertSettings(all.withMaxConcurrentForces(7), 3, Duration.ZERO, 7, Duration.ofMillis(1));
        assertSettings(all.withLatency(Duration.ofMillis(2)), 3, Duration.ZERO, 2, Duration.ofMillis(2));
    }

    private static void assertSettings(EmbeddedServer server, int workerThreads, Duration commitDelay,
                                       int maxConcurrentForces, Duration latency) {
        assertThat(server.workerThreads()).as("worker threads").isEqualTo(workerThreads);
        assertThat(server.commitDelay()).as("commit delay").isEqualTo(commitDelay);
        assertThat(server.maxConcurrentForces()).as("concurrent forces").isEqualTo(maxConcurrentForces);
        assertThat(server.latency()).as("latency").isEqualTo(latency);
    }

    @Test
    void outOfRange_isRefused_inWords() {
        EmbeddedServer server = EmbeddedServer.inMemory();
        assertThatThrownBy(() -> server.withWorkerThreads(0)).hasMessageContaining("worker threads must be between 1");
        assertThatThrownBy(() -> server.withMaxConcurrentForces(0)).hasMessageContaining("concurrent forces must be between 1");
        assertThatThrownBy(() -> server.withCommitDelay(Duration.ofMillis(-1))).hasMessageContaining("commit delay must be between 0");
        assertThatThrownBy(() -> server.withCommitDelay(Duration.ofSeconds(2))).hasMessageContaining("commit delay must be between 0");
    }

    @Test
    void onDisk_withOneThread_noDelay_oneForce_keepsWritesAcrossARestart(@TempDir Path dir) {
        EmbeddedServer configured = EmbeddedServer.onDisk(dir)
                .withWorkerThreads(1).withCommitDelay(Duration.ZERO).withMaxConcurrentForces(1);
        try (EmbeddedServer server = configured.start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> things = client.getDatabase("s").getCollection("things");
            for (int i = 0; i < 20; i++) {
                things.insertOne(new Document("_id", i));
            }
        }
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            assertThat(client.getDatabase("s").getCollection("things").countDocuments()).isEqualTo(20);
        }
    }
}
