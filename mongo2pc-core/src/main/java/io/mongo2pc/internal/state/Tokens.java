package io.mongo2pc.internal.state;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tokens that mark one attempt of a write (an insert, a claim, a takeover), so that a retry after
 * a lost acknowledgement recognises its own write: unique, without a call to the (synchronized)
 * SecureRandom per transaction. Thread-safe.
 * Public for the tworound and recovery packages and Engine, as are the members they use.
 */
public final class Tokens {
    private final String prefix = UUID.randomUUID() + "-";
    private final AtomicLong next = new AtomicLong();

    public String next() {
        return prefix + next.incrementAndGet();
    }
}
