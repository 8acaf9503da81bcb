package io.mongo2pc.embedded.internal;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A slow disk for tests: a hook for {@link DurableStore#beforeEachForce} that holds each force back. */
public final class HeldForces {

    private HeldForces() {
    }

    /** Holds each force of the log until {@code allowed} opens (at most 30 s). */
    public static Runnable until(CountDownLatch allowed) {
        return () -> {
            try {
                allowed.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }
}
