package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Opening a data directory: the snapshot, then the log segments after it replayed in order up to
 * the first torn record, whose tail is cut off. A crash leaves exactly a prefix of the appended
 * records: each record is length-prefixed and CRC-checked, and a segment is zeros after its last
 * record, so anything else after the last whole record is a write the crash tore (and that was
 * never acknowledged, as no reply leaves before its record is forced).
 *
 * <p>The recovered data then goes into a fresh snapshot and a new segment is started, so the next
 * crash never meets a torn record followed by newer ones. Runs on one thread, before the store starts.
 */
final class Recovery {

    private static final Logger log = LoggerFactory.getLogger(Recovery.class);

    /** What a directory held: the data, the segment to append to, and the snapshot's size. */
    record Recovered(StoreState state, LogSegment segment, long snapshotBytes) {
    }

    private record Replayed(long records, long cut) {
    }

    private Recovery() {
    }

    /** Restores the data of {@code directory} (locked by the caller) and starts a new log segment. */
    static Recovered run(DataDirectory directory, long compactThreshold) throws IOException {
        StoreState state = new StoreState();
        long nextWal = 1;
        long start = System.nanoTime();
        Path snapshot = directory.snapshot();
        if (Files.exists(snapshot)) {
            nextWal = SnapshotFile.read(snapshot, state);
        }
        Files.deleteIfExists(directory.snapshotTmp());
        long replayed = 0;
        long cut = 0;
        long generation = nextWal;
        while (Files.exists(directory.segment(generation))) {
            Replayed result = replay(directory.segment(generation), generation, state);
            replayed += result.records();
            cut = result.cut();
            if (cut > 0) {
                log.warn("cut a torn tail of {} bytes from {} (records that were never acknowledged)",
                        cut, directory.segment(generation));
                break;
            }
            generation++;
        }
        long snapshotBytes;
        LogSegment segment;
        if (Files.exists(snapshot) && replayed == 0 && cut == 0 && directory.maxSegmentGeneration() <= nextWal) {
            // the snapshot is already the whole state (e.g. after a clean close): no need to rewrite it
            snapshotBytes = Files.size(snapshot);
            directory.deleteSegmentsBelow(Long.MAX_VALUE);
            segment = LogSegment.create(directory, nextWal, compactThreshold);
        } else {
            long newGeneration = Math.max(generation, directory.maxSegmentGeneration()) + 1;
            snapshotBytes = SnapshotFile.write(directory, state, newGeneration);
            directory.deleteSegmentsBelow(Long.MAX_VALUE);
            segment = LogSegment.create(directory, newGeneration, compactThreshold);
        }
        log.info("opened {}: {} documents, {} log records replayed, in {} ms", directory.path(), state.documentCount(),
                replayed, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        return new Recovered(state, segment, snapshotBytes);
    }

    /** Applies the records of one segment to {@code state}, up to the first that is not whole. */
    private static Replayed replay(Path path, long generation, StoreState state) throws IOException {
        ByteBuffer in = DataDirectory.map(path);
        if (!LogSegment.readHeader(in, generation, path)) {
            return new Replayed(0, in.remaining());
        }
        long count = 0;
        LogRecord record;
        while ((record = LogRecord.readFrom(in)) != null) {
            state.apply(record);
            count++;
        }
        // the log is preallocated with zeros: only non-zero bytes after the last record are a torn tail
        long cut = 0;
        for (int i = in.position(); i < in.limit(); i++) {
            if (in.get(i) != 0) {
                cut = in.limit() - in.position();
                break;
            }
        }
        return new Replayed(count, cut);
    }
}
