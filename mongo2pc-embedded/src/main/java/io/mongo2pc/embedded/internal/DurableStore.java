package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The on-disk home of an embedded server's data: a snapshot plus a write-ahead log, with group
 * commit. The rest of the server uses this class only; behind it, each part in its own room:
 *
 * <ul>
 *   <li>{@link DataDirectory}: the directory, its files and its lock;
 *   <li>{@link SnapshotFile}, {@link LogSegment}: what is in the files;
 *   <li>{@link Recovery}: opening after a crash (replay, torn-tail cut);
 *   <li>{@link WriteAheadLog}: appending records and writing them to the current segment;
 *   <li>{@link GroupCommit}: forcing the log for many requests at once, and who is woken after a
 *       force; {@link Waiters} (threads that block) and {@link LogWriter} (a thread that forces for
 *       callbacks and runs them) wait for it, each holding its force back for requests still being
 *       handled ({@link HoldBack});
 *   <li>{@link Compactor}: a new snapshot once the log grows, so the files stay bounded.
 * </ul>
 *
 * <p>Guarantees: {@link #append} orders records as the backend applies them; {@link #awaitDurable}
 * returns only once the record and all before it are forced to disk. After a crash, {@link #open}
 * restores exactly a prefix of the appended records (a torn tail is detected by length and CRC and
 * cut off), writes a fresh snapshot and starts a new log. While running, when the log outgrows
 * {@code max(compactThreshold, snapshot size)}, the store switches to a new log and a background
 * thread writes a new snapshot, so the files stay bounded by about twice the data size.
 *
 * <p>Thread-safe. Request threads append under a lock, then either wait ({@link #awaitDurable}: the
 * waiters themselves write what is pending and force the log) or ask to be told
 * ({@link #whenDurable}: the store's log writer thread forces for them and calls back). Both are
 * group commit: one force covers every record appended before it starts.
 */
public final class DurableStore implements Journal, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DurableStore.class);

    /** Forces of the log allowed to run at once (each costs CPU; a few in flight hide the disk's latency). */
    public static final int DEFAULT_MAX_CONCURRENT_FORCES = 4;
    /**
     * Default of how long a waiter may hold its force back while other requests are still being
     * handled (they will append records the same force can cover); see {@link HoldBack}.
     * Measured on the 2-core machine at 16 client threads: 2.5 records per force instead of 1.6.
     */
    public static final Duration DEFAULT_COMMIT_DELAY =
            Duration.of(200, ChronoUnit.MICROS);

    /** Default log size that triggers a compaction while running (also grows with the snapshot). */
    public static final long DEFAULT_COMPACT_THRESHOLD = 64L * 1024 * 1024;

    private final DataDirectory directory;
    private final Path dir;
    private final Compactor compactor;
    private final GroupCommit commit;
    private final WriteAheadLog wal;
    private final Waiters waiters;
    private final LogWriter writer;
    /** The store's lock (the group commit's): guards closing and closed. */
    private final ReentrantLock lock;
    private boolean closing;
    private boolean closed;

    private DurableStore(DataDirectory directory, Recovery.Recovered recovered, long compactThreshold,
                         Duration commitDelay, int maxConcurrentForces) {
        this.directory = directory;
        this.dir = directory.path();
        this.compactor = new Compactor(directory, compactThreshold, recovered.snapshotBytes());
        this.commit = new GroupCommit(directory, recovered, compactor, commitDelay, maxConcurrentForces);
        this.wal = commit.wal();
        this.waiters = commit.waiters();
        this.writer = commit.writer();
        this.lock = commit.lock;
    }

    /**
     * Locks {@code dir}, restores the data from its snapshot and log, compacts them into a new
     * snapshot and starts a new log. Call {@link #start()} once the backend holds the data.
     *
     * @throws IllegalStateException if another server holds the directory
     */
    public static DurableStore open(Path dir, long compactThreshold) throws IOException {
        return open(dir, compactThreshold, DEFAULT_COMMIT_DELAY);
    }

    /**
     * As {@link #open(Path, long)}, with how long a force may be held back for requests still
     * being handled ({@link Duration#ZERO}: never).
     */
    public static DurableStore open(Path dir, long compactThreshold, Duration commitDelay) throws IOException {
        return open(dir, compactThreshold, commitDelay, DEFAULT_MAX_CONCURRENT_FORCES);
    }

    /** As {@link #open(Path, long, Duration)}, with how many forces of the log may run at once (at least 1). */
    public static DurableStore open(Path dir, long compactThreshold, Duration commitDelay, int maxConcurrentForces)
            throws IOException {
        if (maxConcurrentForces < 1) {
            throw new IllegalArgumentException("maxConcurrentForces must be at least 1: " + maxConcurrentForces);
        }
        if (commitDelay.isNegative()) {
            throw new IllegalArgumentException("commit delay must not be negative: " + commitDelay);
        }
        DataDirectory directory = DataDirectory.lock(dir);
        Recovery.Recovered recovered;
        try {
            recovered = Recovery.run(directory, compactThreshold);
        } catch (IOException | RuntimeException e) {
            directory.release();
            throw e;
        }
        return new DurableStore(directory, recovered, compactThreshold, commitDelay, maxConcurrentForces);
    }

    /** The recovered data; read it before {@link #start()}, never after. */
    StoreState recoveredState() {
        return wal.state();
    }

    /** Hands the recovered state over to the log; from now on the backend's changes are appended. */
    public synchronized void start() {
        commit.start();
    }

    @Override
    public long append(LogRecord record) {
        lock.lock();
        try {
            checkUsable();
            if (closing) {
                throw new IllegalStateException("the store in " + dir
                        + " is closing; the write was not applied durably");
            }
            return wal.append(record);
        } finally {
            lock.unlock();
        }
    }

    /** Blocks until every record appended so far is on disk. */
    public void awaitAppended() {
        awaitDurable(wal.appendedLsn());
    }

    /**
     * Blocks until record {@code lsn} and all before it are on disk. The waiters force the log
     * themselves, one force for all of them (see {@link Waiters#awaitDurable}); while requests are
     * still being handled a waiter holds its force back for them, for at most the commit delay.
     * Alone, a request forces at once.
     */
    public void awaitDurable(long lsn) {
        waiters.awaitDurable(lsn);
    }

    /** For tests only: runs {@code hook} before each force of the log (to hold it back, or to fail it); null: none. */
    public void beforeEachForce(Runnable hook) {
        commit.beforeEachForce(hook);
    }

    /** Whether record {@code lsn} and all before it are on disk. */
    public boolean isDurable(long lsn) {
        return commit.isDurable(lsn);
    }

    /** The last record appended so far (0 before the first). */
    public long appendedLsn() {
        return wal.appendedLsn();
    }

    /** Told once a record is on disk, or that it may never be. */
    @FunctionalInterface
    public interface Completion {
        /**
         * Called once, on the log writer thread (or on the caller's, if the record is already
         * durable or the log already failed): {@code failure} is null if the record is on disk, else
         * why the log failed. Must be quick and must not block: the next force waits for it.
         */
        void done(Throwable failure);
    }

    /**
     * Calls {@code completion} once record {@code lsn} and all before it are on disk, without
     * blocking: the log writer thread forces the log for every record that callbacks wait for (one
     * force for all of them, as {@link #awaitDurable}'s waiters share one). Before it forces it
     * holds back, for at most the commit delay, while requests are still being handled (between
     * {@link #requestStarted} and {@link #requestFinished}): they will append records the same
     * force can cover. The last of them to finish wakes it.
     */
    public void whenDurable(long lsn, Completion completion) {
        writer.whenDurable(lsn, completion);
    }

    /**
     * Forces the log on the caller's thread if nothing else is going on (no request being handled,
     * no force running, no callback waiting): a lone request then waits for one fsync and no
     * thread hand-offs. Returns whether record {@code lsn} is durable; if not, the caller goes the
     * {@link #whenDurable} way.
     */
    public boolean forceIfIdle(long lsn) {
        return commit.forceIfIdle(lsn);
    }

    /**
     * Blocks until every record appended so far is on disk and every callback waiting for one has
     * run (at most 10 s once durable): so that replies held for those records are on their way out
     * before the server closes the connections.
     */
    public void settle() {
        try {
            awaitDurable(wal.appendedLsn());
        } catch (IllegalStateException e) {
            return; // the log failed: the held replies are dropped and their connections closed
        }
        writer.awaitCallbacksRun();
    }

    /** A request starts being handled: its records, if any, will come soon (see {@link #awaitDurable}). */
    public void requestStarted() {
        commit.requestStarted();
    }

    /** The request started with {@link #requestStarted} is answered. */
    public void requestFinished() {
        commit.requestFinished();
    }

    /** The last record known to be on disk (for tests). */
    long durableLsn() {
        return commit.durableLsn();
    }

    /** Forces of the log so far (records per force shows how well group commit works). */
    public long forces() {
        return commit.forces();
    }

    /** How many compactions finished while running (for tests and monitoring). */
    public long compactions() {
        return compactor.compactions();
    }

    /** Throws if the store can no longer make writes durable (it then refuses all requests). */
    public void checkUsable() {
        Throwable failure = commit.failure();
        if (failure != null) {
            throw new IllegalStateException("the write-ahead log in " + dir + " failed; refusing requests", failure);
        }
        if (closed) {
            throw new IllegalStateException("the store in " + dir + " is closed");
        }
    }

    /** Flushes what is pending, writes a snapshot, then releases the directory. Idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed || closing) {
                return;
            }
            closing = true;
        } finally {
            lock.unlock();
        }
        try {
            awaitDurable(wal.appendedLsn());
            commit.awaitNoForce();
            compactor.awaitRunning();
        } catch (Exception e) {
            log.warn("while closing {}", dir, e);
        }
        try {
            writer.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        compactor.shutdown();
        lock.lock();
        try {
            closed = true;
        } finally {
            lock.unlock();
        }
        wal.close();
        log.info("closed {}: {} log records in {} forces since it was opened", dir, wal.appendedLsn(), forces());
        directory.release();
    }
}
