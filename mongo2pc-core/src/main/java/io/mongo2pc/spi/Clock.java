package io.mongo2pc.spi;

import java.time.Duration;

/**
 * The local time of this process's waits: how long it retries a failing step ({@code retryTimeout},
 * and the backoff between tries), waits for a busy document ({@code conflictTimeout}), waits for
 * an awaited outcome, or pauses between attempts of a consistent read. Production uses
 * {@link #SYSTEM}; a test passes its own ({@code TransactionManagerBuilder.clock}) to move time
 * without sleeping for it.
 *
 * <p>Leases are not judged by this clock: an owner's write deadline, staleness and takeovers are
 * read from the database server's clock, whatever clock is passed here. Implementations must be
 * thread-safe.
 */
public interface Clock {

    /** The system's monotonic clock ({@link System#nanoTime()}) and {@link Thread#sleep}. */
    Clock SYSTEM = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleep(Duration duration) throws InterruptedException {
            Thread.sleep(duration.toMillis(), (int) (duration.toNanos() % 1_000_000));
        }

        @Override
        public String toString() {
            return "Clock.SYSTEM";
        }
    };

    /** Nanoseconds from an arbitrary origin, never decreasing (as {@link System#nanoTime()}). */
    long nanoTime();

    /** Returns once {@code duration} has passed on this clock; throws if the thread is interrupted. */
    void sleep(Duration duration) throws InterruptedException;
}
