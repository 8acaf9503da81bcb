package io.mongo2pc.spi;

/**
 * Called at every {@link CrashPoint} of the protocol with the transaction's id. Production uses
 * {@link #NONE}; tests throw from it to stop a transaction between any two writes (a crash
 * {@code AFTER} a write is a write applied whose acknowledgement was lost). Implementations must
 * be thread-safe.
 */
@FunctionalInterface
public interface CrashHook {

    CrashHook NONE = (point, transactionId) -> { };

    void reached(CrashPoint point, Object transactionId);
}
