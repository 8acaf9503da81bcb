package io.mongo2pc.spring;

import io.mongo2pc.LeaseLostException;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Worker threads inside the application ({@code mongo2pc.worker.enabled=true}): each claims and
 * runs queued ({@code initial}) transactions, and once per scan period one of them runs a recovery
 * pass over the stale transactions of any process. Started with the application context; at
 * shutdown it stops claiming, lets each thread finish the transaction it holds (up to the lease
 * plus the retry timeout), and only then is the manager closed (which finishes what it committed
 * in the background). Thread-safe.
 */
public final class Mongo2pcWorker implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(Mongo2pcWorker.class);
    private static final long IDLE_MIN_MS = 5;
    private static final long IDLE_MAX_MS = 200;
    private static final long ERROR_MAX_MS = 5_000;

    private final TransactionManager manager;
    private final int threads;
    private final long scanPeriodNanos;
    private final List<Thread> running = new ArrayList<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private final AtomicLong nextScan = new AtomicLong();
    private final AtomicLong ran = new AtomicLong();
    private final AtomicLong recovered = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private volatile boolean stopping;

    public Mongo2pcWorker(TransactionManager manager, int threads, Duration scanPeriod) {
        if (threads < 1 || threads > 256) {
            throw new IllegalArgumentException("mongo2pc.worker.threads must be between 1 and 256, got " + threads);
        }
        if (scanPeriod == null || scanPeriod.isNegative() || scanPeriod.isZero()) {
            throw new IllegalArgumentException("mongo2pc.worker.scan-period must be positive, got " + scanPeriod);
        }
        this.manager = manager;
        this.threads = threads;
        this.scanPeriodNanos = scanPeriod.toNanos();
    }

    @Override
    public void start() {
        lock.lock();
        try {
            if (!running.isEmpty()) {
                return;
            }
            stopping = false;
            nextScan.set(System.nanoTime());
            for (int i = 1; i <= threads; i++) {
                Thread t = new Thread(this::loop, "mongo2pc-worker-" + i);
                t.start();
                running.add(t);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void stop() {
        List<Thread> workers;
        lock.lock();
        try {
            stopping = true;
            wake.signalAll();
            workers = new ArrayList<>(running);
            running.clear();
        } finally {
            lock.unlock();
        }
        // A thread in the middle of a transaction finishes it (its steps retry for up to the retry
        // timeout, and it may wait for a busy document up to the lease); what is left after that,
        // recovery finishes once the lease runs out.
        long deadline = System.nanoTime() + manager.settings().lease().plus(manager.settings().retryTimeout()).toNanos();
        for (Thread t : workers) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (t.isAlive()) {
                log.warn("{} still busy at shutdown; recovery finishes its transaction once its lease expires", t.getName());
            }
        }
    }

    @Override
    public boolean isRunning() {
        lock.lock();
        try {
            return !running.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /** Transactions claimed and run to their end by this worker. */
    public long ran() { return ran.get(); }

    /** Stale transactions this worker's recovery passes finished (rolled forward or canceled). */
    public long recovered() { return recovered.get(); }

    /** Errors met (each retried after a pause). */
    public long errors() { return errors.get(); }

    private void loop() {
        long idle = IDLE_MIN_MS;
        long errorPause = 100;
        while (!stopping) {
            try {
                boolean found = recoverIfDue();
                Optional<TransactionOutcome> outcome = stopping ? Optional.empty() : manager.claimAndRun();
                errorPause = 100;
                if (outcome.isPresent()) {
                    ran.incrementAndGet();
                    found = true;
                }
                idle = found ? IDLE_MIN_MS : Math.min(IDLE_MAX_MS, idle * 2);
                if (!found) {
                    pause(idle);
                }
            } catch (LeaseLostException e) {
                log.info("a transaction was taken over by another process, which finishes it: {}", e.getMessage());
            } catch (RuntimeException e) {
                errors.incrementAndGet();
                log.warn("worker error, retrying in {}ms: {}", errorPause, e.toString());
                pause(errorPause);
                errorPause = Math.min(ERROR_MAX_MS, errorPause * 2);
            }
        }
    }

    /** One recovery pass when a scan period has passed since the last one of any thread; true if it finished something. */
    private boolean recoverIfDue() {
        long now = System.nanoTime();
        long due = nextScan.get();
        if (now - due < 0 || !nextScan.compareAndSet(due, now + scanPeriodNanos)) {
            return false;
        }
        RecoveryReport report = manager.recover();
        recovered.addAndGet(report.finished());
        return report.finished() > 0;
    }

    private void pause(long millis) {
        lock.lock();
        try {
            if (!stopping) {
                wake.await(millis, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        } finally {
            lock.unlock();
        }
    }
}
