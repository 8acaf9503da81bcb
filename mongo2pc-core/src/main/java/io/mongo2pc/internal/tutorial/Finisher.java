package io.mongo2pc.internal.tutorial;

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
 * ahead of the thread by more than {@code capacity} items), until there is room or the finisher is
 * closed; a refused item stays the caller's to do. The thread starts with the first item.
 * Thread-safe. Internal: not part of mongo2pc's API.
 * Public for the tworound and reads packages, as are the members they use.
 *
 * @param <T> one item of work
 */
public final class Finisher<T> {
    private static final Logger log = LoggerFactory.getLogger(Finisher.class);

    private final String name;
    private final Consumer<List<T>> work;
    private final int maxBatch;
    private final long lingerNanos;
    private final BlockingQueue<T> queue;
    private final Object lock = new Object();
    /** Items handed over and not yet through {@code work}; guarded by {@code lock}. */
    private long unfinished;
    private Thread thread;
    private volatile boolean closed;

    /**
     * @param linger how long a round waits for more items after its first, unless it fills up:
     *               fewer, larger requests (the items' work is off their callers' path)
     */
    public Finisher(String name, Consumer<List<T>> work, int capacity, int maxBatch, Duration linger) {
        this.name = name;
        this.work = work;
        this.maxBatch = maxBatch;
        this.lingerNanos = linger.toNanos();
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    /** True once {@link #close} was called: nothing more is taken. */
    boolean isClosed() {
        return closed;
    }

    /**
     * Hands {@code item} over, waiting while the queue is full; false if the finisher is closed
     * (or closes while this waits) or this thread is interrupted: the item is then not taken.
     */
    public boolean offer(T item) {
        return offer(item, true);
    }

    /** {@link #offer} without waiting: false at once if the queue is full. */
    public boolean offerNow(T item) {
        return offer(item, false);
    }

    private boolean offer(T item, boolean wait) {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            unfinished++;
            if (thread == null) {
                thread = new Thread(this::loop, name);
                thread.setDaemon(true);
                thread.start();
            }
        }
        boolean taken = false;
        try {
            taken = queue.offer(item);
            while (wait && !taken && !closed) {
                taken = queue.offer(item, 50, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!taken) {
            synchronized (lock) {
                unfinished--;
                lock.notifyAll();
            }
        }
        return taken;
    }

    /**
     * Waits until everything handed over so far went through {@code work}; false if {@code timeout}
     * passed first or this thread was interrupted (its interrupt flag is then set again).
     */
    public boolean awaitIdle(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (unfinished > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Refuses new work (callers waiting for room get false), waits up to {@code timeout} for what
     * was handed over, stops the thread; false if some is left (it is dropped) or this thread was
     * interrupted.
     */
    public boolean close(Duration timeout) {
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
            try {
                t.join(1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return idle;
    }

    private void loop() {
        List<T> batch = new ArrayList<>(maxBatch);
        while (true) {
            try {
                batch.add(queue.take());
                long lingerEnd = System.nanoTime() + lingerNanos;
                queue.drainTo(batch, maxBatch - batch.size());
                while (batch.size() < maxBatch && !closed) {
                    T next = queue.poll(lingerEnd - System.nanoTime(), TimeUnit.NANOSECONDS);
                    if (next == null) {
                        break;
                    }
                    batch.add(next);
                    queue.drainTo(batch, maxBatch - batch.size());
                }
            } catch (InterruptedException e) {
                if (!queue.isEmpty() || !batch.isEmpty()) {
                    log.warn("{} stopped with {} items not done", name, queue.size() + batch.size());
                }
                return;
            }
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
