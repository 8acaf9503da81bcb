package io.mongo2pc.embedded.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The on-disk home of an embedded server's data: a snapshot plus a write-ahead log, with group
 * commit.
 *
 * <p>Files in the data directory: {@code snapshot.dat} (a complete image of the data; header
 * {@code magic, nextWalGeneration}, records, an end record), {@code wal-N.log} (records appended
 * since the snapshot, generation N, replayed in order from the snapshot's next generation), and
 * {@code mongo2pc.lock} (held with an OS file lock while a server uses the directory).
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
    static final int DEFAULT_MAX_CONCURRENT_FORCES = Integer.getInteger("mongo2pc.embedded.maxConcurrentForces", 4);
    /**
     * Default of how long a waiter may hold its force back while other requests are still being
     * handled (they will append records the same force can cover); see {@link #awaitDurable}.
     * Measured on the 2-core machine at 16 client threads: 2.5 records per force instead of 1.6.
     */
    public static final Duration DEFAULT_COMMIT_DELAY =
            Duration.of(Long.getLong("mongo2pc.embedded.commitDelayMicros", 200), ChronoUnit.MICROS);

    /** Default log size that triggers a compaction while running (also grows with the snapshot). */
    public static final long DEFAULT_COMPACT_THRESHOLD = 64L * 1024 * 1024;

    private final DataDirectory directory;
    private final Path dir;
    private final long commitDelayNanos;
    private final int maxConcurrentForces;

    private final StoreState state;
    /** The log segment records are written to; replaced under both locks. */
    private LogSegment segment;

    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean started;
    /** Serializes taking records from {@link #pending} and writing them; guards the log channel's position and the state. */
    private final ReentrantLock writeLock = new ReentrantLock();
    private volatile long writtenLsn;
    /** Guarded by lock: the highest record a running force() covers, and how many are running. */
    private long forcingUpTo;
    private int syncsInFlight;
    /** Guarded by lock: threads parked in {@link #awaitDurable}, not yet woken. */
    private final List<Waiter> waiters = new ArrayList<>();
    /** Guarded by lock: callbacks of {@link #whenDurable} whose record is not yet durable. */
    private final List<Callback> callbacks = new ArrayList<>();
    /** Guarded by lock: callbacks whose record is durable (or the log failed), for the log writer to run. */
    private List<Callback> ready = new ArrayList<>();
    /** Signalled (under lock) when the log writer has work: a callback to force for, or to run. */
    private final Condition writerWork = lock.newCondition();
    /** Guarded by lock: the log writer waits on {@link #writerWork} for work, or for requests being handled. */
    private boolean writerIdle;
    /** Read without the lock by {@link #requestFinished} (a stale value costs at most the commit delay). */
    private volatile boolean writerHolding;
    /** Guarded by lock: the log writer is running callbacks it took from {@link #ready}. */
    private boolean writerRunning;
    /** Signalled (under lock) when the log writer has run a batch of callbacks. */
    private final Condition callbacksRun = lock.newCondition();
    private boolean writerStop;
    private Thread writer;
    /** Used by the log writer thread only. */
    private final HoldBack writerHoldBack;
    /** Threads inside {@link #awaitDurable}. */
    private final AtomicInteger inside = new AtomicInteger();
    /** Requests being handled (between {@link #requestStarted} and {@link #requestFinished}). */
    private final AtomicInteger activeRequests = new AtomicInteger();
    private final LongAdder forces = new LongAdder();
    /** Tests only: runs before each force of the log (to hold it back, or to fail it). */
    private volatile Runnable beforeForce;
    private final List<LogSegment> retired = new ArrayList<>();
    /** Used under writeLock only. */
    private ByteBuf buffer = Unpooled.buffer(1 << 16);
    private ArrayList<LogRecord> pending = new ArrayList<>();
    private volatile long appendedLsn;
    private volatile long durableLsn;
    private volatile Throwable failure;
    private boolean closing;
    private boolean closed;

    private final Compactor compactor;

    private DurableStore(DataDirectory directory, Recovery.Recovered recovered, long compactThreshold,
                         Duration commitDelay, int maxConcurrentForces) {
        this.directory = directory;
        this.dir = directory.path();
        this.state = recovered.state();
        this.segment = recovered.segment();
        this.compactor = new Compactor(directory, compactThreshold, recovered.snapshotBytes());
        this.commitDelayNanos = commitDelay.toNanos();
        this.writerHoldBack = new HoldBack(commitDelayNanos);
        this.maxConcurrentForces = maxConcurrentForces;
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
    static DurableStore open(Path dir, long compactThreshold, Duration commitDelay, int maxConcurrentForces)
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
        return state;
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
            durableLsn = Math.max(durableLsn, writtenLsn);
            wakeWaiters();
            // a concurrent force() may still use it: close it once no force is running
            retired.add(old);
            segment = next;
            closeRetiredIfIdle();
        } finally {
            lock.unlock();
        }
    }

    /** Called with {@link #lock} held. */
    private void closeRetiredIfIdle() {
        if (syncsInFlight > 0) {
            return;
        }
        for (LogSegment old : retired) {
            try {
                old.close();
            } catch (IOException e) {
                log.warn("cannot close an old log of {}", dir, e);
            }
        }
        retired.clear();
    }

    /** Hands the recovered state over to the log; from now on the backend's changes are appended. */
    public synchronized void start() {
        if (writer != null) {
            return;
        }
        started = true;
        writer = new Thread(this::runWriter, "mongo2pc-log-writer " + dir.getFileName());
        writer.setDaemon(true);
        writer.start();
    }

    @Override
    public long append(LogRecord record) {
        lock.lock();
        try {
            checkUsable();
            if (closing) {
                throw new IllegalStateException("the store in " + dir + " is closing; the write was not applied durably");
            }
            pending.add(record);
            return ++appendedLsn;
        } finally {
            lock.unlock();
        }
    }

    /** Blocks until every record appended so far is on disk. */
    public void awaitAppended() {
        awaitDurable(appendedLsn);
    }

    /**
     * Blocks until record {@code lsn} and all before it are on disk.
     *
     * <p>Group commit without a writer thread. A waiter whose record is not covered by a force
     * already running claims every record appended so far, writes what is not yet written (in
     * order, to the page cache) and forces the log, concurrently with other forces (the kernel
     * merges concurrent forces of one file, so a request waits for about one force, not for the
     * one running plus its own). Waiters covered by a running force park until it returns; a
     * returning force wakes exactly the waiters it made durable, and one waiter it did not cover
     * (to force for it and everyone after it), never all of them: a wake-up costs a context
     * switch, and waking every waiter after every force cost 5.8 futex calls and 4.6 context
     * switches per durable update at 16 client threads (docs/BENCHMARKS.md).
     *
     * <p>Siblings: while some requests being handled are not yet waiting here (they are still
     * computing and will append records), a waiter holds its force back for up to the commit
     * delay ({@link #DEFAULT_COMMIT_DELAY}); the last request to arrive, or the first waiter whose delay
     * ran out, forces for all of them. Alone, a request forces at once. A force costs CPU
     * whatever it carries (page write-back, block I/O); under load this puts several times more
     * records into each one.
     */
    public void awaitDurable(long lsn) {
        if (durableLsn >= lsn) {
            return;
        }
        Waiter me = new Waiter(lsn, Thread.currentThread());
        HoldBack holdBack = new HoldBack(commitDelayNanos);
        // an interrupt would close the log's channel in the middle of a write or force (and fail
        // the store): clear the flag while here, restore it on the way out
        boolean interrupted = Thread.interrupted();
        inside.incrementAndGet();
        try {
            lock.lock();
            while (true) {
                // here with the lock held, and not in the list of waiters
                if (durableLsn >= lsn) {
                    lock.unlock();
                    return;
                }
                if (failure != null) {
                    lock.unlock();
                    checkFailure();
                }
                long parkNanos = -1; // below zero: force now; zero: until woken; above: at most that long
                if (forcingUpTo >= lsn || syncsInFlight >= maxConcurrentForces) {
                    parkNanos = 0;
                } else {
                    long left = holdBack.nanosLeft(inside.get() < activeRequests.get());
                    if (left > 0) {
                        parkNanos = left;
                    }
                }
                if (parkNanos < 0) {
                    interrupted |= Thread.interrupted();
                    forceFor();
                    continue;
                }
                me.listed = true;
                me.holding = parkNanos > 0;
                waiters.add(me);
                lock.unlock();
                if (parkNanos == 0) {
                    LockSupport.park(this);
                } else {
                    LockSupport.parkNanos(this, parkNanos);
                }
                // park returns at once while the interrupt flag is set: clear it again
                interrupted |= Thread.interrupted();
                if (!me.listed && durableLsn >= lsn) {
                    return; // woken by the force that made the record durable: no need for the lock
                }
                lock.lock();
                if (me.listed) {
                    waiters.remove(me);
                    me.listed = false;
                }
            }
        } finally {
            if (lock.isHeldByCurrentThread()) {
                lock.unlock(); // only if something threw with the lock held
            }
            inside.decrementAndGet();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** For tests only: runs {@code hook} before each force of the log (to hold it back, or to fail it); null: none. */
    public void beforeEachForce(Runnable hook) {
        beforeForce = hook;
    }

    /** Whether record {@code lsn} and all before it are on disk. */
    public boolean isDurable(long lsn) {
        return durableLsn >= lsn;
    }

    /** The last record appended so far (0 before the first). */
    public long appendedLsn() {
        return appendedLsn;
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
        Throwable failed;
        lock.lock();
        try {
            failed = failure;
            if (failed == null && durableLsn < lsn) {
                if (!started) {
                    throw new IllegalStateException("the store in " + dir + " was not started");
                }
                callbacks.add(new Callback(lsn, completion));
                if (writerIdle || (writerHolding && activeRequests.get() <= 0)) {
                    writerWork.signal();
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        completion.done(failed);
    }

    /**
     * Forces the log on the caller's thread if nothing else is going on (no request being handled,
     * no force running, no callback waiting): a lone request then waits for one fsync and no
     * thread hand-offs, as handing it to the log writer and back costs two wake-ups. Returns
     * whether record {@code lsn} is durable; if not, the caller goes the {@link #whenDurable} way.
     */
    public boolean forceIfIdle(long lsn) {
        lock.lock();
        try {
            if (durableLsn >= lsn) {
                return true;
            }
            if (failure != null || !started || Thread.currentThread().isInterrupted()
                    || activeRequests.get() > 0 || syncsInFlight > 0
                    || !callbacks.isEmpty() || !waiters.isEmpty()) {
                return false;
            }
            forceFor();
            return durableLsn >= lsn;
        } finally {
            lock.unlock();
        }
    }

    /** The log writer thread: forces for the callbacks of {@link #whenDurable}, then runs them. */
    private void runWriter() {
        while (true) {
            List<Callback> due;
            lock.lock();
            try {
                writerHoldBack.reset();
                while (ready.isEmpty()) {
                    if (failure != null && !callbacks.isEmpty()) {
                        ready.addAll(callbacks);
                        callbacks.clear();
                        continue;
                    }
                    if (callbacks.isEmpty()) {
                        if (writerStop) {
                            return;
                        }
                        writerIdle = true;
                        writerWork.awaitUninterruptibly();
                        writerIdle = false;
                        continue;
                    }
                    long left = writerHoldBack.nanosLeft(activeRequests.get() > 0 && !writerStop);
                    if (left > 0) {
                        writerHolding = true;
                        awaitWork(left);
                        writerHolding = false;
                        continue;
                    }
                    writerHoldBack.reset();
                    if (forcingUpTo >= appendedLsn || syncsInFlight >= maxConcurrentForces) {
                        // a waiter's force covers the callbacks, or none may start: woken when one ends
                        awaitWork(0);
                        continue;
                    }
                    forceFor();
                }
                due = ready;
                ready = new ArrayList<>();
                writerRunning = true;
            } catch (Throwable t) {
                // the writer must not die and leave replies waiting for ever: fail the store instead
                fail(t);
                wakeWaiters(); // with the store failed: every waiter, and every callback to ready
                continue;
            } finally {
                writerHolding = false;
                lock.unlock();
            }
            for (Callback callback : due) {
                Throwable failed = callback.lsn <= durableLsn ? null : failure;
                try {
                    callback.completion.done(failed);
                } catch (RuntimeException | Error e) {
                    log.warn("a durability callback failed", e);
                }
            }
            lock.lock();
            try {
                writerRunning = false;
                callbacksRun.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Blocks until every record appended so far is on disk and every callback waiting for one has
     * run (at most 10 s once durable): so that replies held for those records are on their way out
     * before the server closes the connections.
     */
    public void settle() {
        try {
            awaitDurable(appendedLsn);
        } catch (IllegalStateException e) {
            return; // the log failed: the held replies are dropped and their connections closed
        }
        lock.lock();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!ready.isEmpty() || !callbacks.isEmpty() || writerRunning) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || writer == null || !writer.isAlive()) {
                    return;
                }
                callbacksRun.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /** Waits on {@link #writerWork} for at most {@code nanos} (0: until signalled). Called with {@link #lock} held. */
    private void awaitWork(long nanos) {
        try {
            if (nanos > 0) {
                writerWork.awaitNanos(nanos);
            } else {
                writerWork.await();
            }
        } catch (InterruptedException e) {
            // nobody else knows the log writer thread: its loop checks what it waits for again
        }
    }

    /** A callback of {@link #whenDurable}. */
    private record Callback(long lsn, Completion completion) {
    }

    /**
     * Claims every record appended so far, writes the ones not yet written and forces the log,
     * then wakes the waiters. Called with {@link #lock} held; releases it while writing and forcing.
     */
    private void forceFor() {
        long target = appendedLsn;
        forcingUpTo = Math.max(forcingUpTo, target);
        syncsInFlight++;
        Throwable failed = null;
        lock.unlock();
        try {
            writeUpTo(target);
            LogSegment toForce;
            lock.lock();
            try {
                // a log switched since the write was forced by the switch (switchSegment)
                toForce = segment;
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
            closeRetiredIfIdle();
            wakeWaiters();
        }
    }

    /**
     * Wakes the waiters whose records are durable (all of them once the log failed), and one whose
     * record no running force covers, if a force may start (one parked until woken: a waiter
     * holding its force back for siblings wakes by itself when its delay is over); takes them off
     * the list of waiters. Called with {@link #lock} held.
     */
    private void wakeWaiters() {
        Waiter uncovered = null;
        for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (failure != null || waiter.lsn <= durableLsn) {
                it.remove();
                waiter.wake();
            } else if (uncovered == null && !waiter.holding && waiter.lsn > forcingUpTo) {
                uncovered = waiter;
            }
        }
        if (uncovered != null && syncsInFlight < maxConcurrentForces) {
            waiters.remove(uncovered);
            uncovered.wake();
        }
        boolean moved = false;
        for (Iterator<Callback> it = callbacks.iterator(); it.hasNext(); ) {
            Callback callback = it.next();
            if (failure != null || callback.lsn <= durableLsn) {
                it.remove();
                ready.add(callback);
                moved = true;
            }
        }
        if (moved || !callbacks.isEmpty()) {
            writerWork.signal(); // to run them, or to force for the rest now that a force ended
        }
    }

    /** A thread parked in {@link #awaitDurable}. */
    private static final class Waiter {
        final long lsn;
        final Thread thread;
        /** In {@link #waiters}; set and cleared under {@link #lock}, read without it by the waiter once woken. */
        volatile boolean listed;
        /** Parked for at most the commit delay (holding its force back), not until woken; guarded by {@link #lock}. */
        boolean holding;

        Waiter(long lsn, Thread thread) {
            this.lsn = lsn;
            this.thread = thread;
        }

        void wake() {
            listed = false;
            LockSupport.unpark(thread);
        }
    }

    /** A request starts being handled: its records, if any, will come soon (see {@link #awaitDurable}). */
    public void requestStarted() {
        activeRequests.incrementAndGet();
    }

    /** The request started with {@link #requestStarted} is answered. */
    public void requestFinished() {
        if (activeRequests.decrementAndGet() <= 0 && writerHolding) {
            // the log writer holds its force back for requests being handled: there are none now
            lock.lock();
            try {
                writerWork.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Waits until no force is running (a force with a lower target can still run after the last
     * record is durable; closing the log under it would fail the store). Used by {@link #close}.
     */
    private void awaitNoForce() {
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

    /** The last record known to be on disk (for tests). */
    long durableLsn() {
        return durableLsn;
    }

    /** Forces of the log so far (records per force shows how well group commit works). */
    public long forces() {
        return forces.sum();
    }

    /** Writes every pending record to the log, unless record {@code lsn} is already written. */
    private void writeUpTo(long lsn) {
        writeLock.lock();
        try {
            if (writtenLsn >= lsn) {
                return;
            }
            checkFailure();
            if (!started) {
                throw new IllegalStateException("the store in " + dir + " was not started");
            }
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
                if (failure == null) {
                    fail(e);
                }
                wakeWaiters();
            } finally {
                lock.unlock();
            }
            checkFailure();
        } finally {
            writeLock.unlock();
        }
    }

    /** Called with {@link #lock} held. */
    private void fail(Throwable t) {
        if (failure == null) {
            log.error("write-ahead log write failed; the server refuses further requests", t);
            failure = t;
        }
    }

    private void checkFailure() {
        if (failure != null) {
            throw new IllegalStateException("the write-ahead log in " + dir + " failed; the write is not durable", failure);
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

    /** Throws if the store can no longer make writes durable (it then refuses all requests). */
    public void checkUsable() {
        if (failure != null) {
            throw new IllegalStateException("the write-ahead log in " + dir + " failed; refusing requests", failure);
        }
        if (closed) {
            throw new IllegalStateException("the store in " + dir + " is closed");
        }
    }

    private void maybeCompact() throws IOException {
        if (!compactor.isDue(segment.position())) {
            return;
        }
        long newGeneration = segment.generation() + 1;
        switchSegment();
        compactor.compactInBackground(state.copy(), newGeneration);
    }

    /** How many compactions finished while running (for tests and monitoring). */
    public long compactions() {
        return compactor.compactions();
    }

    /** Stops the log writer once it has run every callback (all records are durable by now, or the log failed). */
    private void stopWriter() throws InterruptedException {
        Thread thread;
        lock.lock();
        try {
            writerStop = true;
            writerWork.signal();
            thread = writer;
        } finally {
            lock.unlock();
        }
        if (thread != null) {
            thread.join();
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
            awaitDurable(appendedLsn);
            awaitNoForce();
            compactor.awaitRunning();
        } catch (Exception e) {
            log.warn("while closing {}", dir, e);
        }
        try {
            stopWriter();
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
            if (segment != null) {
                boolean logHasRecords = segment.hasRecords();
                segment.forceAndClose();
                if (logHasRecords && failure == null) {
                    // a clean close leaves just a snapshot, so the next open need not replay or rewrite
                    long next = segment.generation() + 1;
                    compactor.compactNow(state, next);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.warn("while closing the log in {} (the log is kept and replayed on the next open)", dir, e);
        } finally {
            writeLock.unlock();
        }
        log.info("closed {}: {} log records in {} forces since it was opened", dir, appendedLsn, forces());
        directory.release();
    }
}
