package io.mongo2pc.internal.interactive;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.spi.Clock;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The waits of one interactive transaction, on the manager's {@link Clock}, bounded by its timeout:
 * the backoff between attempts (full jitter, doubling from 1 ms up to 100 ms) and the pauses of a
 * read waiting for another transaction's lock (doubling from 1 ms up to 20 ms). Past the timeout a
 * wait ends the attempt with the conflict it waited on. Not thread-safe: one transaction's.
 */
final class Waits {
    private static final long MAX_BACKOFF_MS = 100;
    private static final long MAX_PAUSE_MS = 20;

    private final Clock clock;
    private final long deadlineNanos;
    private final Object transactionId;

    Waits(Clock clock, Duration timeout, Object transactionId) {
        this.clock = clock;
        this.deadlineNanos = clock.nanoTime() + timeout.toNanos();
        this.transactionId = transactionId;
    }

    long now() {
        return clock.nanoTime();
    }

    boolean expired() {
        return clock.nanoTime() - deadlineNanos >= 0;
    }

    /** A pause of a read waiting on {@code heldBy}; past the timeout, the attempt ends with that conflict instead. */
    void pause(int round, ConflictKind kind, DocumentRef ref, Object heldBy, String reason) {
        if (expired()) {
            throw new Lost(kind, ref, heldBy, reason);
        }
        sleep(ThreadLocalRandom.current().nextLong(1, Math.min(MAX_PAUSE_MS, 1L << Math.min(round, 5)) + 1));
    }

    /** The backoff before attempt {@code next} (2, 3, ...): uniform in [0, min(100 ms, 2^(next-1) ms)], never past the timeout. */
    void backoff(int next) {
        long cap = Math.min(MAX_BACKOFF_MS, 1L << Math.min(next - 1, 7));
        long left = Math.max(0, (deadlineNanos - clock.nanoTime()) / 1_000_000);
        sleep(Math.min(left, ThreadLocalRandom.current().nextLong(cap + 1)));
    }

    private void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            clock.sleep(Duration.ofMillis(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + transactionId + ": interrupted between its attempts", transactionId, null, e);
        }
    }
}
