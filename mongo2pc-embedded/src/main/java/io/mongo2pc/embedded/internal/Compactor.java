package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Keeps the data directory bounded: once the log segment being written outgrows
 * {@code max(compactThreshold, snapshot size)}, the log switches to a new segment and this writes
 * a snapshot of the data as of the switch on a background thread, then deletes the older
 * segments. The directory so holds at most about two snapshots plus one segment.
 *
 * <p>{@link #isDue} and {@link #compactInBackground} are called by the thread writing the log
 * (under the store's write lock); the rest by the store while it closes.
 */
final class Compactor {

    private static final Logger log = LoggerFactory.getLogger(Compactor.class);

    private final DataDirectory directory;
    private final long compactThreshold;
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "mongo2pc-compactor");
        t.setDaemon(true);
        return t;
    });
    /** The last compaction started; written under the store's write lock. */
    private Future<?> compaction;
    private volatile long compactions;
    private volatile long snapshotBytes;

    Compactor(DataDirectory directory, long compactThreshold, long snapshotBytes) {
        this.directory = directory;
        this.compactThreshold = compactThreshold;
        this.snapshotBytes = snapshotBytes;
    }

    /** Whether a segment holding {@code logBytes} should give way to a new one and a snapshot (none is running). */
    boolean isDue(long logBytes) {
        if (logBytes < Math.max(compactThreshold, snapshotBytes)) {
            return false;
        }
        return compaction == null || compaction.isDone();
    }

    /**
     * Writes {@code image} (a copy no one changes) as the snapshot on the compactor's thread, then
     * deletes the segments before {@code nextGeneration}; a failure keeps the log, and the next
     * compaction tries again.
     */
    void compactInBackground(StoreState image, long nextGeneration) {
        compaction = executor.submit(() -> {
            try {
                snapshotBytes = SnapshotFile.write(directory, image, nextGeneration);
                directory.deleteSegmentsBelow(nextGeneration);
                compactions++;
                log.info("compacted {} into a snapshot of {} bytes", directory.path(), snapshotBytes);
            } catch (IOException | RuntimeException e) {
                log.warn("compaction of {} failed; the log is kept and compaction retried later",
                        directory.path(), e);
            }
        });
    }

    /**
     * At a clean close: writes {@code state} as the snapshot now and deletes the segments before
     * {@code nextGeneration}.
     */
    void compactNow(StoreState state, long nextGeneration) throws IOException {
        snapshotBytes = SnapshotFile.write(directory, state, nextGeneration);
        directory.deleteSegmentsBelow(nextGeneration);
    }

    /** Waits for a compaction still running. */
    void awaitRunning() throws InterruptedException, ExecutionException {
        Future<?> running = compaction;
        if (running != null) {
            running.get();
        }
    }

    /** Lets the compactor's thread end (after the compaction it runs, if any). */
    void shutdown() {
        executor.shutdown();
    }

    /** How many compactions finished while running. */
    long compactions() {
        return compactions;
    }
}
