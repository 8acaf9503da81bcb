package io.mongo2pc.internal.wire;

/**
 * How many requests a {@link Batcher} keeps out at once: between 1 and a maximum, moved by each
 * request's round trip, the way TCP Vegas sizes its window (a floor above 1 if asked). A request that came back within twice
 * the fastest recent one met no queue on its way (its time went to the network, which more requests
 * share for free): one more may go out. A slower one queued behind others for a busy server or
 * client: one fewer may, so that more writes share each request and the work per write falls. So
 * the limit settles where a request takes about twice the fastest: at the maximum when each round
 * trip is mostly network latency, near 1 (the most combining) when it is mostly work.
 *
 * <p>"Recent" is the last ten seconds (the fastest of the window before the current one, or of
 * the current one if faster), so the limit follows a network that got slower. Thread-safe: racing
 * updates may lose a step, which the next request makes up; the limit itself never leaves its bounds.
 */
final class InFlightLimit {
    private static final long WINDOW_NANOS = 10_000_000_000L;

    private final int min;
    private final int max;
    private volatile int limit;
    private volatile long fastest = Long.MAX_VALUE;
    private volatile long windowFastest = Long.MAX_VALUE;
    private volatile long windowStart = System.nanoTime();

    /** Starts at {@code max}: a lone request goes out at once, and the first round trips say what the network is. */
    InFlightLimit(int max) {
        this(1, max);
    }

    /** Never below {@code min} (at least 1, at most {@code max}). */
    InFlightLimit(int min, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("the most requests in flight must be at least 1, got " + max);
        }
        if (min < 1 || min > max) {
            throw new IllegalArgumentException("the fewest requests in flight must be between 1 and " + max + ", got " + min);
        }
        this.min = min;
        this.max = max;
        this.limit = max;
    }

    /** The most requests to keep out now. */
    int get() {
        return limit;
    }

    /** A request came back after {@code nanos}. */
    void roundTrip(long nanos) {
        long now = System.nanoTime();
        if (nanos < windowFastest) {
            windowFastest = nanos;
        }
        if (nanos < fastest) {
            fastest = nanos;
        }
        if (now - windowStart > WINDOW_NANOS) {
            fastest = windowFastest;
            windowFastest = Long.MAX_VALUE;
            windowStart = now;
        }
        int current = limit;
        limit = nanos <= 2 * fastest ? Math.min(max, current + 1) : Math.max(min, current - 1);
    }
}
