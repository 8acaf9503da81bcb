package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The log writer thread: forces the log for the callbacks of {@link #whenDurable} (one force for
 * all of them), then runs them. This is how replies wait for the disk without a blocked thread
 * (see {@link ReplyGate}).
 *
 * <p>Before it forces it holds back ({@link HoldBack}) while requests are still being handled:
 * they will append records the same force can cover. The last of them to finish wakes it.
 *
 * <p>Thread-safe: its state is guarded by the store's lock ({@link GroupCommit#lock}).
 */
final class LogWriter {

    private static final Logger log = LoggerFactory.getLogger(LogWriter.class);

    private final GroupCommit commit;
    private final ReentrantLock lock;
    private final String threadName;
    /** Guarded by lock: callbacks whose record is not yet durable. */
    private final List<Callback> callbacks = new ArrayList<>();
    /** Guarded by lock: callbacks whose record is durable (or the log failed), for the log writer to run. */
    private List<Callback> ready = new ArrayList<>();
    /** Signalled (under lock) when the log writer has work: a callback to force for, or to run. */
    private final Condition work;
    /** Guarded by lock: the log writer waits on {@link #work} for work, or for requests being handled. */
    private boolean idle;
    /** Read without the lock by {@link #requestsDone} (a stale value costs at most the commit delay). */
    private volatile boolean holding;
    /** Guarded by lock: the log writer is running callbacks it took from {@link #ready}. */
    private boolean running;
    /** Signalled (under lock) when the log writer has run a batch of callbacks. */
    private final Condition callbacksRun;
    private boolean stop;
    private Thread thread;
    /** Used by the log writer thread only. */
    private final HoldBack holdBack;

    LogWriter(GroupCommit commit, String threadName) {
        this.commit = commit;
        this.lock = commit.lock;
        this.threadName = threadName;
        this.work = lock.newCondition();
        this.callbacksRun = lock.newCondition();
        this.holdBack = commit.newHoldBack();
    }

    /** Starts the thread (once). */
    void start() {
        if (thread != null) {
            return;
        }
        thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Calls {@code completion} once record {@code lsn} and all before it are on disk, without
     * blocking; at once on the caller's thread if it is durable already, or the log failed.
     */
    void whenDurable(long lsn, DurableStore.Completion completion) {
        Throwable failed;
        lock.lock();
        try {
            failed = commit.failure();
            if (failed == null && !commit.isDurable(lsn)) {
                commit.checkStarted();
                callbacks.add(new Callback(lsn, completion));
                if (idle || (holding && commit.activeRequests() <= 0)) {
                    work.signal();
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        completion.done(failed);
    }

    private void run() {
        while (true) {
            List<Callback> due;
            lock.lock();
            try {
                holdBack.reset();
                while (ready.isEmpty()) {
                    if (commit.failure() != null && !callbacks.isEmpty()) {
                        ready.addAll(callbacks);
                        callbacks.clear();
                        continue;
                    }
                    if (callbacks.isEmpty()) {
                        if (stop) {
                            return;
                        }
                        idle = true;
                        work.awaitUninterruptibly();
                        idle = false;
                        continue;
                    }
                    long left = holdBack.nanosLeft(commit.activeRequests() > 0 && !stop);
                    if (left > 0) {
                        holding = true;
                        awaitWork(left);
                        holding = false;
                        continue;
                    }
                    holdBack.reset();
                    if (commit.isClaimed(commit.appendedLsn()) || !commit.mayStartForce()) {
                        // a waiter's force covers the callbacks, or none may start: woken when one ends
                        awaitWork(0);
                        continue;
                    }
                    commit.forceFor();
                }
                due = ready;
                ready = new ArrayList<>();
                running = true;
            } catch (Throwable t) {
                // the writer must not die and leave replies waiting for ever: fail the store instead
                commit.failAndWake(t); // with the store failed: every waiter, and every callback to ready
                continue;
            } finally {
                holding = false;
                lock.unlock();
            }
            for (Callback callback : due) {
                Throwable failed = commit.isDurable(callback.lsn) ? null : commit.failure();
                try {
                    callback.completion.done(failed);
                } catch (RuntimeException | Error e) {
                    log.warn("a durability callback failed", e);
                }
            }
            lock.lock();
            try {
                running = false;
                callbacksRun.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Waits on {@link #work} for at most {@code nanos} (0: until signalled). Called with the lock held. */
    private void awaitWork(long nanos) {
        try {
            if (nanos > 0) {
                work.awaitNanos(nanos);
            } else {
                work.await();
            }
        } catch (InterruptedException e) {
            // nobody else knows the log writer thread: its loop checks what it waits for again
        }
    }

    /** Whether a callback waits for its record. Called with the lock held. */
    boolean hasCallbacks() {
        return !callbacks.isEmpty();
    }

    /**
     * Hands the callbacks whose records are durable (all of them once the log failed) to the
     * thread to run, and wakes it for them, or to force for the rest now that a force ended.
     * Called with the lock held.
     */
    void wakeCallbacks() {
        boolean moved = false;
        for (Iterator<Callback> it = callbacks.iterator(); it.hasNext(); ) {
            Callback callback = it.next();
            if (commit.failure() != null || commit.isDurable(callback.lsn)) {
                it.remove();
                ready.add(callback);
                moved = true;
            }
        }
        if (moved || !callbacks.isEmpty()) {
            work.signal();
        }
    }

    /** No request is being handled any more: if the thread holds its force back for them, it forces now. */
    void requestsDone() {
        if (holding) {
            lock.lock();
            try {
                work.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Blocks until every callback waiting for a record has run (at most 10 s); call once every
     * record is durable.
     */
    void awaitCallbacksRun() {
        lock.lock();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!ready.isEmpty() || !callbacks.isEmpty() || running) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || thread == null || !thread.isAlive()) {
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

    /** Stops the thread once it has run every callback (all records are durable by now, or the log failed). */
    void stop() throws InterruptedException {
        Thread writer;
        lock.lock();
        try {
            stop = true;
            work.signal();
            writer = thread;
        } finally {
            lock.unlock();
        }
        if (writer != null) {
            writer.join();
        }
    }

    /** A callback of {@link #whenDurable}. */
    private record Callback(long lsn, DurableStore.Completion completion) {
    }
}
