package io.mongo2pc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Leader/follower batching of requests that threads make at the same moment: the first thread to
 * arrive sends what is queued as one request; the others wait for that answer, and one of them
 * sends the next. One request is in flight at a time (more with {@code -Dmongo2pc.combiner.leaders=N},
 * which measured slower); a lone thread sends at once, with no delay.
 * Thread-safe. Internal: not part of mongo2pc's API.
 *
 * @param <I> what one thread asks for
 * @param <O> its answer
 */
public final class Batcher<I, O> {
    /** A waiting thread looks again after this long even if nobody woke it (it should always be woken). */
    private static final long PARK_NANOS = 5_000_000;

    private final Function<List<I>, List<O>> send;
    private final ToIntFunction<I> weight;
    private final int maxWeight;
    private final int maxLeaders;
    private final ConcurrentLinkedQueue<Entry<I, O>> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger leaders = new AtomicInteger();

    /**
     * @param send      sends inputs as one request; returns their answers in the same order, or throws
     *                  (then every thread of that request gets the exception)
     * @param weight    the weight of one input (e.g. how many writes it carries)
     * @param maxWeight the most weight in one request (an input heavier than this goes alone)
     */
    public Batcher(Function<List<I>, List<O>> send, ToIntFunction<I> weight, int maxWeight) {
        this.send = send;
        this.weight = weight;
        this.maxWeight = maxWeight;
        this.maxLeaders = Integer.getInteger("mongo2pc.combiner.leaders", 1);
    }

    private static final class Entry<I, O> {
        final I input;
        final Thread waiter = Thread.currentThread();
        O output;
        RuntimeException error;
        volatile boolean done;

        Entry(I input) {
            this.input = input;
        }
    }

    /** Sends {@code input} with whatever other threads are sending, and returns its answer. */
    public O submit(I input) {
        Entry<I, O> entry = new Entry<>(input);
        queue.add(entry);
        while (!entry.done) {
            boolean sent = false;
            if (tryLead()) {
                try {
                    sent = sendOnce();
                } finally {
                    leaders.decrementAndGet();
                }
                // Whoever queued while this request was in flight leads the next one.
                Entry<I, O> next = queue.peek();
                if (next != null) {
                    LockSupport.unpark(next.waiter);
                }
            }
            if (!sent && !entry.done) {
                // Another leader carries this input (or will): it wakes this thread when answered.
                LockSupport.parkNanos(this, PARK_NANOS);
            }
        }
        if (entry.error != null) {
            throw entry.error;
        }
        return entry.output;
    }

    private boolean tryLead() {
        while (true) {
            int current = leaders.get();
            if (current >= maxLeaders) {
                return false;
            }
            if (leaders.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** Sends what is queued, up to maxWeight; false if nothing was. */
    private boolean sendOnce() {
        List<Entry<I, O>> batch = new ArrayList<>();
        int total = 0;
        Entry<I, O> next;
        while (total < maxWeight && (next = queue.poll()) != null) {
            batch.add(next);
            total += weight.applyAsInt(next.input);
        }
        if (batch.isEmpty()) {
            return false;
        }
        List<I> inputs = new ArrayList<>(batch.size());
        batch.forEach(e -> inputs.add(e.input));
        List<O> outputs = null;
        RuntimeException error = null;
        try {
            outputs = send.apply(inputs);
            if (outputs.size() != inputs.size()) {
                error = new IllegalStateException("a batch of " + inputs.size() + " got " + outputs.size() + " answers");
            }
        } catch (RuntimeException e) {
            error = e;
        } finally {
            for (int i = 0; i < batch.size(); i++) {
                Entry<I, O> e = batch.get(i);
                if (error != null || outputs == null) {
                    e.error = error != null ? error : new IllegalStateException("batch not sent");
                } else {
                    e.output = outputs.get(i);
                }
                e.done = true;
                LockSupport.unpark(e.waiter);
            }
        }
        return true;
    }
}
