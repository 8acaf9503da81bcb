package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.bson.Document;
import io.mongo2pc.embedded.EmbeddedServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Recovery from crash images of the data folder: torn and corrupt log tails. */
class DurableStoreTest {

    private static final int RECORDS = 40;

    @TempDir
    Path tmp;

    @Test
    void folderThatCannotBeRestored_failsEveryStartWithItsOwnError_notWithTheFolderLocked() throws IOException {
        // Regression (found in review): a start whose restore failed kept the folder locked, so the
        // next start in the same JVM said "in use by another embedded server" and hid the cause.
        Path dir = tmp.resolve("damaged");
        DurableStore store = DurableStore.open(dir, 1 << 20);
        store.start();
        store.append(new LogRecord(LogRecord.Type.CREATE_COLLECTION, "db", "c", new Document("idField", "_id")));
        store.append(new LogRecord(LogRecord.Type.ADD_INDEX, "db", "c", new Document("v", 2)
                .append("key", new Document("k", 1)).append("name", "k_1").append("ns", "db.c").append("unique", true)));
        store.append(LogRecord.put("db", "c", new Document("_id", 1).append("k", "x")));
        store.append(LogRecord.put("db", "c", new Document("_id", 2).append("k", "x"))); // breaks the unique index
        store.awaitAppended();
        store.close();

        for (int attempt = 1; attempt <= 2; attempt++) {
            assertThatThrownBy(() -> EmbeddedServer.onDisk(dir).start()).as("start " + attempt)
                    .hasMessageContaining("k_1").hasMessageNotContaining("in use");
        }
    }

    @Test
    void tornLogTail_atEveryByteOfTheLastRecords_recoversAPrefix() throws IOException {
        // given a crash image: the folder copied while the server runs, after 40 acknowledged puts
        Path live = tmp.resolve("live");
        Map<String, byte[]> image = crashImage(live);
        String walName = image.keySet().stream().filter(n -> n.startsWith("wal-")).findFirst().orElseThrow();
        byte[] wal = image.get(walName);
        int end = logicalEnd(wal);
        int recordBytes = (end - 12) / RECORDS;

        // when the log is cut at every byte of its last three records, then opened
        for (int cut = end - 3 * recordBytes; cut <= end; cut++) {
            byte[] torn = new byte[wal.length];
            System.arraycopy(wal, 0, torn, 0, cut);
            List<Integer> ids = reopen(image, walName, torn, "cut-" + cut);
            // then exactly the records before the cut are there: a prefix, nothing half-applied
            // (a record whose only missing bytes are trailing zeros is still whole: the log is zero-filled)
            int complete = 0;
            while (complete < RECORDS && lastNonZero(wal, 12 + complete * recordBytes, recordBytes) < cut) {
                complete++;
            }
            assertThat(ids).as("cut at byte %d of %d", cut, end).isEqualTo(range(complete));
        }
    }

    @Test
    void corruptRecordInTheMiddle_dropsItAndEverythingAfter() throws IOException {
        Map<String, byte[]> image = crashImage(tmp.resolve("live"));
        String walName = image.keySet().stream().filter(n -> n.startsWith("wal-")).findFirst().orElseThrow();
        byte[] wal = image.get(walName).clone();
        int recordBytes = (logicalEnd(wal) - 12) / RECORDS;
        wal[12 + 20 * recordBytes + recordBytes / 2] ^= 0x5A; // inside record 20

        assertThat(reopen(image, walName, wal, "corrupt")).isEqualTo(range(20));
    }

    @Test
    void reopenAfterRecovery_keepsTheRecoveredState() throws IOException {
        Map<String, byte[]> image = crashImage(tmp.resolve("live"));
        String walName = image.keySet().stream().filter(n -> n.startsWith("wal-")).findFirst().orElseThrow();
        assertThat(reopen(image, walName, image.get(walName), "first")).isEqualTo(range(RECORDS));
        // the first reopen rewrote the snapshot and started a new log; open that folder again
        try (DurableStore store = DurableStore.open(tmp.resolve("first"), DurableStore.DEFAULT_COMPACT_THRESHOLD)) {
            assertThat(ids(store)).isEqualTo(range(RECORDS));
        }
    }

    private Map<String, byte[]> crashImage(Path live) throws IOException {
        DurableStore store = DurableStore.open(live, DurableStore.DEFAULT_COMPACT_THRESHOLD);
        store.start();
        try {
            store.append(new LogRecord(LogRecord.Type.CREATE_COLLECTION, "d", "c", new Document("idField", "_id")));
            store.awaitAppended();
            // after the create, so that every later record has the same length
            Map<String, byte[]> before = copy(live);
            for (int i = 0; i < RECORDS; i++) {
                store.append(LogRecord.put("d", "c", new Document("_id", 100 + i).append("v", "value-" + (100 + i))));
            }
            store.awaitAppended();
            Map<String, byte[]> image = copy(live);
            // drop the create record from the image (a put creates its collection anyway), so the log
            // is a 12-byte header followed by RECORDS records of equal length
            String walName = image.keySet().stream().filter(n -> n.startsWith("wal-")).findFirst().orElseThrow();
            int createEnd = logicalEnd(before.get(walName));
            byte[] wal = image.get(walName);
            byte[] shifted = new byte[wal.length - (createEnd - 12)];
            System.arraycopy(wal, 0, shifted, 0, 12);
            System.arraycopy(wal, createEnd, shifted, 12, wal.length - createEnd);
            image.put(walName, shifted);
            return image;
        } finally {
            store.close();
        }
    }

    private static Map<String, byte[]> copy(Path dir) throws IOException {
        Map<String, byte[]> files = new java.util.TreeMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : list.toList()) {
                if (!f.getFileName().toString().equals(DataDirectory.LOCK)) {
                    files.put(f.getFileName().toString(), Files.readAllBytes(f));
                }
            }
        }
        return files;
    }

    private static int lastNonZero(byte[] bytes, int from, int length) {
        int last = from;
        for (int i = from; i < from + length; i++) {
            if (bytes[i] != 0) {
                last = i;
            }
        }
        return last;
    }

    /** The offset after the last record (the log is preallocated with zeros after it). */
    private static int logicalEnd(byte[] wal) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(wal);
        int at = 12;
        while (at + 8 <= wal.length && in.getInt(at) > 0) {
            at += 8 + in.getInt(at);
        }
        return at;
    }

    private List<Integer> reopen(Map<String, byte[]> image, String walName, byte[] wal, String name) throws IOException {
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        for (Map.Entry<String, byte[]> e : image.entrySet()) {
            Files.write(dir.resolve(e.getKey()), e.getKey().equals(walName) ? wal : e.getValue());
        }
        try (DurableStore store = DurableStore.open(dir, DurableStore.DEFAULT_COMPACT_THRESHOLD)) {
            return ids(store);
        }
    }

    private static List<Integer> ids(DurableStore store) {
        StoreState.CollectionState c = store.recoveredState().databases.getOrDefault("d", Map.of()).get("c");
        List<Integer> ids = new ArrayList<>();
        if (c != null) {
            c.documents.values().forEach(d -> ids.add((Integer) d.get("_id")));
        }
        return ids;
    }

    private static List<Integer> range(int n) {
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(100 + i);
        }
        return ids;
    }
}
