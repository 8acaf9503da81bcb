package io.mongo2pc.embedded;

import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RestartTest {

    @TempDir
    Path dir;

    @Test
    void cleanCloseAndReopen_keepsDocumentsIndexesAndDrops() {
        // given data written through every kind of change
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");
            for (int i = 0; i < 100; i++) {
                accounts.insertOne(new Document("_id", "acc-" + i).append("balance", 1000).append("pendingTransactions", List.of()));
            }
            accounts.createIndex(Indexes.ascending("owner"), new IndexOptions().unique(true).sparse(true));
            accounts.updateOne(Filters.eq("_id", "acc-1"), Updates.inc("balance", -100));
            accounts.updateOne(Filters.eq("_id", "acc-2"), Updates.push("pendingTransactions", "t1"));
            accounts.findOneAndUpdate(Filters.eq("_id", "acc-3"), Updates.set("owner", "ann"));
            accounts.replaceOne(Filters.eq("_id", "acc-4"), new Document("balance", 7));
            accounts.deleteOne(Filters.eq("_id", "acc-5"));
            client.getDatabase("bank").getCollection("scratch").insertOne(new Document("x", 1));
            client.getDatabase("bank").getCollection("scratch").drop();
            client.getDatabase("other").getCollection("c").insertOne(new Document("_id", 1));
            client.getDatabase("other").drop();
        }

        // when it is reopened
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> accounts = client.getDatabase("bank").getCollection("accounts");

            // then everything is as it was
            assertThat(accounts.countDocuments()).isEqualTo(99);
            assertThat(accounts.find(Filters.eq("_id", "acc-1")).first().getInteger("balance")).isEqualTo(900);
            assertThat(accounts.find(Filters.eq("_id", "acc-2")).first().getList("pendingTransactions", String.class)).containsExactly("t1");
            assertThat(accounts.find(Filters.eq("_id", "acc-3")).first().getString("owner")).isEqualTo("ann");
            assertThat(accounts.find(Filters.eq("_id", "acc-4")).first()).isEqualTo(new Document("_id", "acc-4").append("balance", 7));
            assertThat(accounts.find(Filters.eq("_id", "acc-5")).first()).isNull();
            assertThat(client.getDatabase("bank").listCollectionNames().into(new ArrayList<>())).containsExactly("accounts");
            assertThat(client.listDatabaseNames().into(new ArrayList<>())).doesNotContain("other");
            List<String> indexNames = new ArrayList<>();
            accounts.listIndexes().forEach(index -> indexNames.add(index.getString("name")));
            assertThat(indexNames).contains("_id_", "owner_1");
            assertThatThrownBy(() -> accounts.updateOne(Filters.eq("_id", "acc-6"), Updates.set("owner", "ann")))
                    .isInstanceOf(MongoWriteException.class).hasMessageContaining("duplicate key");
            assertThatThrownBy(() -> accounts.insertOne(new Document("_id", "acc-1")))
                    .isInstanceOf(MongoWriteException.class).hasMessageContaining("duplicate key");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("idsEqualAcrossTypes")
    void replaceWithAnIdOfAnotherTypeThatIsEqual_reopensWithOneDocument_andADeleteStaysDeleted(String name, Object oldId, Object newId) {
        // Regression (found in review): the stored data kept documents by the raw id, so after
        // replacing _id 1 with 1L it held both versions, could not be reopened (duplicate key),
        // and a document deleted after such a replacement came back.
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> c = client.getDatabase("db").getCollection("c");
            c.insertMany(List.of(new Document("_id", oldId).append("v", "old"), new Document("_id", "other").append("v", "old")));
            assertThat(c.replaceOne(Filters.eq("_id", oldId), new Document("_id", newId).append("v", "new")).getModifiedCount()).isEqualTo(1);
            c.replaceOne(Filters.eq("_id", "other"), new Document("_id", "other").append("v", "gone"));
            assertThat(c.deleteOne(Filters.eq("_id", "other")).getDeletedCount()).isEqualTo(1);
        }
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> c = client.getDatabase("db").getCollection("c");
            assertThat(c.find().into(new ArrayList<>())).as("after a clean reopen").singleElement()
                    .satisfies(d -> assertThat(d.getString("v")).isEqualTo("new"));
            assertThat(c.deleteOne(Filters.eq("_id", oldId)).getDeletedCount()).isEqualTo(1);
        }
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            assertThat(client.getDatabase("db").getCollection("c").countDocuments()).as("a deleted document stays deleted").isZero();
        }
    }

    static Stream<Arguments> idsEqualAcrossTypes() {
        return Stream.of(
                Arguments.of("1 then 1L", 1, 1L),
                Arguments.of("0.0 then -0.0", 0.0, -0.0),
                Arguments.of("{a: 1} then {a: 1L}", new Document("a", 1), new Document("a", 1L)));
    }

    @Test
    void secondServerOnSameDirectory_failsWithClearMessage() {
        try (EmbeddedServer first = EmbeddedServer.onDisk(dir).start()) {
            EmbeddedServer second = EmbeddedServer.onDisk(dir);
            assertThatThrownBy(second::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is in use by another embedded server")
                    .hasMessageContaining(dir.toAbsolutePath().toString());
            assertThat(first.uri()).startsWith("mongodb://127.0.0.1:");
        }
        // and once the first one is closed the directory can be used again
        try (EmbeddedServer again = EmbeddedServer.onDisk(dir).start()) {
            assertThat(again.dataDir()).contains(dir);
        }
    }

    @Test
    void serverMainOnALockedDirectory_exitsWithCodeOneAndSaysWhy() throws Exception {
        try (EmbeddedServer first = EmbeddedServer.onDisk(dir).start()) {
            Process second = new ProcessBuilder(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"),
                    ServerMain.class.getName(), "--data", dir.toString())
                    .redirectErrorStream(true).start();
            String output = new String(second.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(second.waitFor()).isEqualTo(1);
            assertThat(output).contains("cannot start the embedded server")
                    .contains("is in use by another embedded server")
                    .doesNotContain("mongodb://127.0.0.1:");
        }
    }

    @Test
    void longRunWithSmallCompactionThreshold_keepsFilesBoundedAndDataIntact() throws Exception {
        // given a server that compacts once its log passes 256 KiB
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir, 256 * 1024).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> counters = client.getDatabase("db").getCollection("counters");
            for (int i = 0; i < 50; i++) {
                counters.insertOne(new Document("_id", i).append("n", 0).append("pad", "x".repeat(2000)));
            }
            // when each document is rewritten many times (about 3.4 MB of log in total)
            for (int round = 0; round < 1600; round++) {
                counters.updateOne(Filters.eq("_id", round % 50), Updates.inc("n", 1));
                if (round % 400 == 0) {
                    assertBoundedOnceCompactionCatchesUp(client);
                }
            }
            // then the directory stays far below the log volume
            assertBoundedOnceCompactionCatchesUp(client);
        }
        try (EmbeddedServer server = EmbeddedServer.onDisk(dir).start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> counters = client.getDatabase("db").getCollection("counters");
            assertThat(counters.countDocuments()).isEqualTo(50);
            for (Document d : counters.find()) {
                assertThat(d.getInteger("n")).isEqualTo(32);
            }
        }
    }

    /**
     * The directory is under 1 MiB (a snapshot of about 100 KB and segments of 256 KiB), or gets
     * there once the background compaction has caught up: on a loaded machine it lags behind the
     * writes, and the segment being written grows meanwhile (1.41 MB seen). Small writes to another
     * collection let the next compaction start; without compaction the directory would only grow.
     */
    private void assertBoundedOnceCompactionCatchesUp(MongoClient client) throws Exception {
        MongoCollection<Document> ticks = client.getDatabase("db").getCollection("ticks");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long size = directorySize();
        while (size >= 1024L * 1024 && System.nanoTime() < deadline) {
            ticks.updateOne(Filters.eq("_id", 0), Updates.inc("n", 1), new UpdateOptions().upsert(true));
            Thread.sleep(50);
            size = directorySize();
        }
        assertThat(size).as("data directory bytes").isLessThan(1024L * 1024);
    }

    private long directorySize() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.mapToLong(f -> f.toFile().length()).sum();
        }
    }

    @Test
    void inMemory_startsOnFreePortAndServes() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            assertThat(server.dataDir()).isEmpty();
            MongoCollection<Document> c = client.getDatabase("db").getCollection("c");
            c.insertOne(new Document("_id", 1).append("a", 1));
            c.updateOne(Filters.and(Filters.eq("_id", 1), Filters.gte("a", 1)), Updates.inc("a", 1));
            assertThat(c.find().first().getInteger("a")).isEqualTo(2);
        }
    }
}
