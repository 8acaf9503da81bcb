package io.mongo2pc.internal.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Batching of requests that threads make at the same moment, with several requests out at once:
 * up to {@code maxInFlight}, fewer while requests come back slower than twice the fastest recent
 * one ({@link InFlightLimit}). A thread that finds a request slot free sends its own input at
 * once, together with whatever other threads have queued meanwhile; a thread that finds every
 * slot taken queues its input, and the next thread to get a slot carries it. So a thread waits
 * for an unrelated request only when all slots are taken: when round trips are network latency,
 * each step costs one; when they are the server's work, inputs queue and share requests. A sender
 * never carries only others' inputs: its own is always in the request it sends, and it returns
 * with that answer. A lone thread sends at once, with no delay. Thread-safe. Internal: not part
 * of mongo2pc's API.
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
    private final InFlightLimit limit;
    private final ConcurrentLinkedQueue<Entry<I, O>> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * @param send        sends inputs as one request; returns their answers in the same order, or throws
     *                    (then every thread of that request gets the exception)
     * @param weight      the weight of one input (e.g. how many writes it carries)
     * @param maxWeight   the most weight in one request (an input heavier than this goes alone)
     * @param maxInFlight the most requests out at once
     */
    public Batcher(Function<List<I>, List<O>> send, ToIntFunction<I> weight, int maxWeight, int maxInFlight) {
        this(send, weight, maxWeight, 1, maxInFlight);
    }

    /** As above, never fewer than {@code minInFlight} requests out at once (between 1 and {@code maxInFlight}). */
    public Batcher(Function<List<I>, List<O>> send, ToIntFunction<I> weight, int maxWeight, int minInFlight, int maxInFlight) {
        this.send = send;
        this.weight = weight;
        this.maxWeight = maxWeight;
        this.limit = new InFlightLimit(minInFlight, maxInFlight);
    }

    /** How many requests may be out now (for tests). */
    int limit() {
        return limit.get();
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

    /**
     * Sends {@code input} with whatever other threads are sending, and returns its answer. An
     * interrupt that comes while the thread waits does not end the wait (its input may already be
     * on the wire, carried by another thread): the thread keeps waiting, parked, and returns with
     * its interrupt status set.
     */
    public O submit(I input) {
        Entry<I, O> entry = new Entry<>(input);
        queue.add(entry);
        boolean interrupted = false;
        while (!entry.done) {
            if (tryTakeSlot()) {
                try {
                    // Whoever takes an entry off the queue sends it: if another sender took this one
                    // meanwhile, it carries it, and this thread only waits for that answer.
                    if (queue.remove(entry)) {
                        sendWith(entry);
                    }
                } finally {
                    inFlight.decrementAndGet();
                }
                wakeNext();
            }
            if (!entry.done) {
                LockSupport.parkNanos(this, PARK_NANOS);
                // a park returns at once while the interrupt status is set: clear it, restore it below
                interrupted |= Thread.interrupted();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (entry.error != null) {
            throw entry.error;
        }
        return entry.output;
    }

    private boolean tryTakeSlot() {
        while (true) {
            int current = inFlight.get();
            if (current >= limit.get()) {
                return false;
            }
            if (inFlight.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** A slot is free (or the queue outgrew a request): the first queued thread may send next. */
    private void wakeNext() {
        Entry<I, O> next = queue.peek();
        if (next != null) {
            LockSupport.unpark(next.waiter);
        }
    }

    /** Sends {@code own} and what is queued, up to maxWeight, and answers every thread carried. */
    private void sendWith(Entry<I, O> own) {
        List<Entry<I, O>> batch = new ArrayList<>();
        batch.add(own);
        int total = weight.applyAsInt(own.input);
        Entry<I, O> next;
        while (total < maxWeight && (next = queue.poll()) != null) {
            batch.add(next);
            total += weight.applyAsInt(next.input);
        }
        if (!queue.isEmpty()) {
            wakeNext(); // more than one request holds: another free slot can take the rest at once
        }
        List<I> inputs = new ArrayList<>(batch.size());
        batch.forEach(e -> inputs.add(e.input));
        List<O> outputs = null;
        RuntimeException error = null;
        try {
            long sent = System.nanoTime();
            outputs = send.apply(inputs);
            limit.roundTrip(System.nanoTime() - sent);
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
                if (e != own) {
                    LockSupport.unpark(e.waiter);
                }
            }
        }
    }
}
