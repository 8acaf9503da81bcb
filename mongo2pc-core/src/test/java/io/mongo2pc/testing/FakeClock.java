package io.mongo2pc.testing;

import io.mongo2pc.spi.Clock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Clock} that tests move: {@link #sleep} returns at once, having moved the clock by the
 * time asked for, so a wait of minutes passes without the test sleeping for it. Like
 * {@link System#nanoTime()}, its origin is arbitrary (and not 0: code must not take 0 for "unset").
 * Thread-safe.
 */
public final class FakeClock implements Clock {
    private static final long ORIGIN = -7_000_000_000_000L;

    private final AtomicLong nanos = new AtomicLong(ORIGIN);
    private final AtomicLong sleeps = new AtomicLong();

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while sleeping on a fake clock");
        }
        sleeps.incrementAndGet();
        nanos.addAndGet(duration.toNanos());
    }

    /** How far the clock has moved since it was made. */
    public Duration elapsed() {
        return Duration.ofNanos(nanos.get() - ORIGIN);
    }

    /** How many times a caller slept on it. */
    public long sleeps() {
        return sleeps.get();
    }
}
