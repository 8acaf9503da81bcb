package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit: the records of many requests made durable by few forces of the log. A force
 * claims every record appended before it starts, writes the ones not yet written and forces the
 * log; several may run at once (the kernel merges concurrent forces of one file), at most
 * {@code maxConcurrentForces}.
 *
 * <p>Positions in the log, as log sequence numbers: appended (see {@link WriteAheadLog}), claimed
 * by a running force, durable. Two ways to wait for a record: a thread parks ({@link Waiters}, who
 * force for themselves), or a callback is registered with the {@link LogWriter} (whose thread
 * forces for every callback, then runs them). Either may hold its force back for requests still
 * being handled ({@link HoldBack}). A force that ends wakes exactly who it made durable, and one
 * waiter it did not cover, to force for the rest.
 *
 * <p>Builds the log, the waiters and the log writer, which share its {@link #lock}. Thread-safe:
 * its state is guarded by that lock, which a force releases while it writes and forces; the count
 * of requests being handled is atomic.
 */
final class GroupCommit {

    private static final Logger log = LoggerFactory.getLogger(GroupCommit.class);

    /** The store's lock: guards the positions, the waiters, the callbacks and the log's pending records. */
    final ReentrantLock lock = new ReentrantLock();
    private final Path dir;
    private final int maxConcurrentForces;
    private final long commitDelayNanos;
    private final WriteAheadLog wal;
    private final Waiters waiters;
    private final LogWriter writer;

    private volatile boolean started;
    /** Written under lock: the last record known to be on disk. */
    private volatile long durableLsn;
    /** Written under lock: why the log failed (the store then refuses every request), or null. */
    private volatile Throwable failure;
    /** Guarded by lock: the highest record a running force covers, and how many are running. */
    private long forcingUpTo;
    private int syncsInFlight;
    /** Requests being handled (between {@link #requestStarted} and {@link #requestFinished}). */
    private final AtomicInteger activeRequests = new AtomicInteger();
    private final LongAdder forces = new LongAdder();
    /** Tests only: runs before each force of the log (to hold it back, or to fail it). */
    private volatile Runnable beforeForce;

    GroupCommit(DataDirectory directory, Recovery.Recovered recovered, Compactor compactor, Duration commitDelay,
                int maxConcurrentForces) {
        this.dir = directory.path();
        this.maxConcurrentForces = maxConcurrentForces;
        this.commitDelayNanos = commitDelay.toNanos();
        this.wal = new WriteAheadLog(this, directory, recovered, compactor);
        this.waiters = new Waiters(this);
        this.writer = new LogWriter(this, "mongo2pc-log-writer " + dir.getFileName());
    }

    WriteAheadLog wal() {
        return wal;
    }

    Waiters waiters() {
        return waiters;
    }

    LogWriter writer() {
        return writer;
    }

    /** From now on records are written to the log (and applied to its state), and the log writer runs. */
    void start() {
        started = true;
        writer.start();
    }

    boolean isStarted() {
        return started;
    }

    void checkStarted() {
        if (!started) {
            throw new IllegalStateException("the store in " + dir + " was not started");
        }
    }

    /** A hold-back of one force for sibling requests, for at most the commit delay. */
    HoldBack newHoldBack() {
        return new HoldBack(commitDelayNanos);
    }

    long appendedLsn() {
        return wal.appendedLsn();
    }

    long durableLsn() {
        return durableLsn;
    }

    boolean isDurable(long lsn) {
        return durableLsn >= lsn;
    }

    Throwable failure() {
        return failure;
    }

    /** Throws if the log failed: no write can be made durable any more. */
    void checkFailure() {
        if (failure != null) {
            throw new IllegalStateException("the write-ahead log in " + dir + " failed; the write is not durable",
                    failure);
        }
    }

    /** Whether a running force covers record {@code lsn}. Called with {@link #lock} held. */
    boolean isClaimed(long lsn) {
        return forcingUpTo >= lsn;
    }

    /** Whether another force may start now. Called with {@link #lock} held. */
    boolean mayStartForce() {
        return syncsInFlight < maxConcurrentForces;
    }

    /** Whether a force runs. Called with {@link #lock} held. */
    boolean isForcing() {
        return syncsInFlight > 0;
    }

    /** Requests being handled now. */
    int activeRequests() {
        return activeRequests.get();
    }

    /** A request starts being handled: its records, if any, will come soon. */
    void requestStarted() {
        activeRequests.incrementAndGet();
    }

    /** The request started with {@link #requestStarted} is answered. */
    void requestFinished() {
        if (activeRequests.decrementAndGet() <= 0) {
            writer.requestsDone();
        }
    }

    /**
     * Forces the log on the caller's thread if nothing else is going on (no request being handled,
     * no force running, no callback waiting): a lone request then waits for one fsync and no
     * thread hand-offs, as handing it to the log writer and back costs two wake-ups. Returns
     * whether record {@code lsn} is durable; if not, the caller goes the {@link LogWriter#whenDurable} way.
     */
    boolean forceIfIdle(long lsn) {
        lock.lock();
        try {
            if (durableLsn >= lsn) {
                return true;
            }
            if (failure != null || !started || Thread.currentThread().isInterrupted()
                    || activeRequests.get() > 0 || syncsInFlight > 0
                    || writer.hasCallbacks() || waiters.any()) {
                return false;
            }
            forceFor();
            return durableLsn >= lsn;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Claims every record appended so far, writes the ones not yet written and forces the log,
     * then wakes the waiters. Called with {@link #lock} held; releases it while writing and forcing.
     */
    void forceFor() {
        long target = wal.appendedLsn();
        forcingUpTo = Math.max(forcingUpTo, target);
        syncsInFlight++;
        Throwable failed = null;
        lock.unlock();
        try {
            wal.writeUpTo(target);
            LogSegment toForce;
            lock.lock();
            try {
                // a segment switched since the write was forced by the switch (WriteAheadLog.switchSegment)
                toForce = wal.segment();
            } finally {
                lock.unlock();
            }
            Runnable hook = beforeForce;
            if (hook != null) {
                hook.run();
            }
            toForce.force();
        } catch (Throwable t) {
            failed = t;
        } finally {
            lock.lock();
            syncsInFlight--;
            forces.increment();
            if (failed == null) {
                durableLsn = Math.max(durableLsn, target);
            } else {
                fail(failed);
            }
            wal.closeRetiredIfIdle();
            wakeWaiters();
        }
    }

    /**
     * Records up to {@code lsn} were forced outside a force (a segment switch forces the old
     * segment): they are durable; wakes who waits for them. Called with {@link #lock} held.
     */
    void madeDurable(long lsn) {
        durableLsn = Math.max(durableLsn, lsn);
        wakeWaiters();
    }

    /**
     * Wakes who is durable now (everyone once the log failed): the waiters, plus one whose record
     * no running force covers if a force may start; the callbacks, which go to the log writer to
     * run. Called with {@link #lock} held.
     */
    void wakeWaiters() {
        waiters.wake();
        writer.wakeCallbacks();
    }

    /** The log failed: every waiter and callback is told. Called with {@link #lock} held. */
    void failAndWake(Throwable t) {
        fail(t);
        wakeWaiters();
    }

    /** Called with {@link #lock} held. */
    private void fail(Throwable t) {
        if (failure == null) {
            log.error("write-ahead log write failed; the server refuses further requests", t);
            failure = t;
        }
    }

    /**
     * Waits until no force is running (a force with a lower target can still run after the last
     * record is durable; closing the log under it would fail the store). Used when closing.
     */
    void awaitNoForce() {
        while (true) {
            lock.lock();
            try {
                if (syncsInFlight == 0) {
                    return;
                }
            } finally {
                lock.unlock();
            }
            LockSupport.parkNanos(this, 1_000_000);
        }
    }

    /** Forces of the log so far. */
    long forces() {
        return forces.sum();
    }

    /** For tests only: runs {@code hook} before each force of the log; null: none. */
    void beforeEachForce(Runnable hook) {
        beforeForce = hook;
    }
}
