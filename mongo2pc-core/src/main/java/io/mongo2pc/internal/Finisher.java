package io.mongo2pc.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One daemon thread that takes work handed over by other threads and does it in batches: all that
 * queued while the previous batch ran, up to {@code maxBatch}, goes to {@code work} at once. The
 * queue is bounded: a thread that hands work over while it is full waits (the callers cannot run
 * ahead of the thread by more than {@code capacity} items). The thread starts with the first item.
 * Thread-safe. Internal: not part of mongo2pc's API.
 *
 * @param <T> one item of work
 */
final class Finisher<T> {
    private static final Logger log = LoggerFactory.getLogger(Finisher.class);

    private final String name;
    private final Consumer<List<T>> work;
    private final int maxBatch;
    private final BlockingQueue<T> queue;
    private final Object lock = new Object();
    /** Items handed over and not yet through {@code work}; guarded by {@code lock}. */
    private long unfinished;
    private Thread thread;
    private boolean closed;

    Finisher(String name, Consumer<List<T>> work, int capacity, int maxBatch) {
        this.name = name;
        this.work = work;
        this.maxBatch = maxBatch;
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    /** Hands {@code item} over; waits while the queue is full. */
    void submit(T item) {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException(name + " is closed");
            }
            unfinished++;
            if (thread == null) {
                thread = new Thread(this::loop, name);
                thread.setDaemon(true);
                thread.start();
            }
        }
        try {
            queue.put(item);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            synchronized (lock) {
                unfinished--;
                lock.notifyAll();
            }
            throw new IllegalStateException("interrupted while handing work to " + name, e);
        }
    }

    /** Waits until everything handed over so far went through {@code work}; false if {@code timeout} passed first. */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (unfinished > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    /** Refuses new work, waits up to {@code timeout} for what was handed over, stops the thread; false if some is left. */
    boolean close(Duration timeout) throws InterruptedException {
        synchronized (lock) {
            closed = true;
        }
        boolean idle = awaitIdle(timeout);
        Thread t;
        synchronized (lock) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            t.join(1_000);
        }
        return idle;
    }

    private void loop() {
        List<T> batch = new ArrayList<>(maxBatch);
        while (true) {
            try {
                batch.add(queue.take());
            } catch (InterruptedException e) {
                return;
            }
            queue.drainTo(batch, maxBatch - 1);
            try {
                work.accept(batch);
            } catch (RuntimeException | Error e) {
                // The work handles its own failures; this is a bug, and the thread must go on.
                log.error("{} failed on a batch of {}", name, batch.size(), e);
            }
            synchronized (lock) {
                unfinished -= batch.size();
                lock.notifyAll();
            }
            batch.clear();
        }
    }
}
