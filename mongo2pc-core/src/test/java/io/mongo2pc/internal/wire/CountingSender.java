package io.mongo2pc.internal.wire;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** A {@link Batcher}'s send for tests: counts the requests and how many are out at once around {@code server}. */
final class CountingSender<I, O> implements Function<List<I>, List<O>> {
    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Function<List<I>, List<O>> server;

    CountingSender(Function<List<I>, List<O>> server) {
        this.server = server;
    }

    @Override
    public List<O> apply(List<I> inputs) {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        requests.incrementAndGet();
        try {
            return server.apply(inputs);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
