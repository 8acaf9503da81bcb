package io.mongo2pc.embedded.internal;

import io.netty.channel.Channel;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A round trip added to every request, standing for the network and replication between an
 * application and a real MongoDB: each reply leaves no sooner than this long after its request
 * arrived (and, on disk, never before its writes are durable: whichever comes later). No thread
 * waits meanwhile: the reply waits in its connection's {@link LatencyGate}, and one timer thread
 * hands it back to the connection's event loop when it is due.
 *
 * <p>The timer thread sleeps with {@code parkNanos} (about 0.1 ms late on Linux); the event loop's
 * own timers wake on whole milliseconds, too coarse for a 0.5 ms round trip.
 *
 * <p>Thread-safe. {@link #close()} stops the timer; replies still held are dropped with their
 * connections.
 */
public final class AddedLatency implements AutoCloseable {

    /**
     * The most latency accepted: the driver gives up on a connection that does not answer its
     * handshake within 10 s (its default connect timeout), so more would only break connections.
     */
    public static final Duration MAX = Duration.ofSeconds(5);

    private final long nanos;
    private final ScheduledThreadPoolExecutor timer;

    /** {@code latency} between zero (exclusive) and {@link #MAX}; see {@link #check}. */
    public AddedLatency(Duration latency) {
        check(latency);
        if (latency.isZero()) {
            throw new IllegalArgumentException("a latency of zero adds nothing: leave it out");
        }
        this.nanos = latency.toNanos();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mongo2pc-latency-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /** Refuses a latency below zero or above {@link #MAX}, naming it. */
    public static Duration check(Duration latency) {
        if (latency == null || latency.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative, got " + latency);
        }
        if (latency.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("latency must be at most " + MAX.toSeconds() + "s (the driver's connect"
                    + " timeout is 10s), got " + latency.toMillis() + "ms");
        }
        return latency;
    }

    long nanos() {
        return nanos;
    }

    /**
     * A request is being handled on {@code channel} (call on its event loop): gives the connection
     * its gate on its first request, which counts as arrived now. Later requests are timed by the
     * gate as they come in.
     */
    public void requestStarted(Channel channel) {
        LatencyGate.install(channel, this);
    }

    /** Runs {@code wake} (which hops to an event loop) once {@code nanoTime} has reached {@code dueNanos}. */
    void wakeAt(long dueNanos, Runnable wake) {
        try {
            timer.schedule(wake, dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the server is stopping and its connections go with it
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
