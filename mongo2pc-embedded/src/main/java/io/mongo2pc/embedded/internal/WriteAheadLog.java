package io.mongo2pc.embedded.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write-ahead log: records in the order the backend applies them ({@link #append}), written
 * in batches to the current {@link LogSegment} and applied to the {@link StoreState} as they are
 * written, so that a snapshot can be taken at any position of the log. When the {@link Compactor}
 * says so, the log switches to a new segment (the old one forced first) and a snapshot of the
 * state as of the switch is written in the background.
 *
 * <p>Thread-safe. Appending needs the store's lock ({@link GroupCommit#lock}, held by the caller);
 * writing takes {@link #writeLock}, so batches are taken and written one at a time, in order.
 * Forces ({@link GroupCommit#forceFor}) run outside both and may overlap each other and a write.
 */
final class WriteAheadLog {

    private static final Logger log = LoggerFactory.getLogger(WriteAheadLog.class);

    private final GroupCommit commit;
    private final ReentrantLock lock;
    /** Serializes taking records from {@link #pending} and writing them; guards the segment's position, the state. */
    private final ReentrantLock writeLock = new ReentrantLock();
    private final DataDirectory directory;
    private final Compactor compactor;
    /** The data as the log describes it; changed under writeLock once the store started. */
    private final StoreState state;
    /** The segment records are written to; replaced under both locks, so read under either. */
    private LogSegment segment;
    /** Guarded by lock: old segments a running force may still use, closed once none runs. */
    private final List<LogSegment> retired = new ArrayList<>();
    /** Guarded by lock: records appended and not yet taken to be written. */
    private ArrayList<LogRecord> pending = new ArrayList<>();
    /** Written under lock. */
    private volatile long appendedLsn;
    /** Written under writeLock. */
    private volatile long writtenLsn;
    /** Used under writeLock only. */
    private ByteBuf buffer = Unpooled.buffer(1 << 16);

    WriteAheadLog(GroupCommit commit, DataDirectory directory, Recovery.Recovered recovered, Compactor compactor) {
        this.commit = commit;
        this.lock = commit.lock;
        this.directory = directory;
        this.compactor = compactor;
        this.state = recovered.state();
        this.segment = recovered.segment();
    }

    /** The data as the log describes it; read it only before the store starts. */
    StoreState state() {
        return state;
    }

    /** Appends {@code record} and returns its log sequence number. Called with the lock held. */
    long append(LogRecord record) {
        pending.add(record);
        return ++appendedLsn;
    }

    /** The last record appended so far (0 before the first). */
    long appendedLsn() {
        return appendedLsn;
    }

    /** The segment a force should force. Called with the lock held. */
    LogSegment segment() {
        return segment;
    }

    /**
     * Writes every pending record to the log, unless record {@code lsn} is already written. A
     * failure fails the store before the write lock is released, so that no later batch is
     * written (and forced, and acknowledged) after one that failed.
     */
    void writeUpTo(long lsn) {
        writeLock.lock();
        try {
            if (writtenLsn >= lsn) {
                return;
            }
            commit.checkFailure();
            commit.checkStarted();
            List<LogRecord> batch;
            long batchEnd;
            lock.lock();
            try {
                batch = pending;
                pending = new ArrayList<>(Math.max(16, batch.size()));
                batchEnd = appendedLsn;
            } finally {
                lock.unlock();
            }
            write(batch);
            writtenLsn = batchEnd;
            maybeCompact();
        } catch (IOException | RuntimeException | Error e) {
            lock.lock();
            try {
                commit.failAndWake(e);
            } finally {
                lock.unlock();
            }
            commit.checkFailure();
        } finally {
            writeLock.unlock();
        }
    }

    /** Encodes one batch, applies it to the state and writes it to the log. Called under {@link #writeLock}. */
    private void write(List<LogRecord> batch) throws IOException {
        buffer.clear();
        for (LogRecord record : batch) {
            record.writeTo(buffer);
            state.apply(record);
        }
        segment.append(buffer.nioBuffer());
        if (buffer.capacity() > (1 << 22)) {
            buffer = Unpooled.buffer(1 << 16);
        }
    }

    /** Called under {@link #writeLock}. */
    private void maybeCompact() throws IOException {
        if (!compactor.isDue(segment.position())) {
            return;
        }
        long newGeneration = segment.generation() + 1;
        switchSegment();
        compactor.compactInBackground(state.copy(), newGeneration);
    }

    /**
     * Switches the log to a new segment: everything written to the old one is forced first (and so
     * made durable), and the old one is closed once no force runs on it. Called under {@link #writeLock}.
     */
    private void switchSegment() throws IOException {
        LogSegment old = segment;
        LogSegment next = old.createNext(directory);
        // everything written to the old log becomes durable before records go to the new one
        old.force();
        lock.lock();
        try {
            commit.madeDurable(writtenLsn);
            // a concurrent force() may still use it: close it once no force is running
            retired.add(old);
            segment = next;
            closeRetiredIfIdle();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the old segments if no force runs. Called with the lock held. */
    void closeRetiredIfIdle() {
        if (commit.isForcing()) {
            return;
        }
        for (LogSegment old : retired) {
            try {
                old.close();
            } catch (IOException e) {
                log.warn("cannot close an old log of {}", directory.path(), e);
            }
        }
        retired.clear();
    }

    /**
     * Closes the log; once no force runs and no record is appended any more. A log with records
     * (and that did not fail) becomes a snapshot, so that the next open neither replays nor rewrites.
     */
    void close() {
        writeLock.lock();
        try {
            lock.lock();
            try {
                for (LogSegment old : retired) {
                    old.close();
                }
                retired.clear();
            } finally {
                lock.unlock();
            }
            boolean logHasRecords = segment.hasRecords();
            segment.forceAndClose();
            if (logHasRecords && commit.failure() == null) {
                compactor.compactNow(state, segment.generation() + 1);
            }
        } catch (IOException | RuntimeException e) {
            log.warn("while closing the log in {} (the log is kept and replayed on the next open)",
                    directory.path(), e);
        } finally {
            writeLock.unlock();
        }
    }
}
