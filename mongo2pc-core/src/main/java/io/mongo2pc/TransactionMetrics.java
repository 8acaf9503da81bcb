package io.mongo2pc;

import java.time.Duration;

/**
 * Receives what the engine does, for metrics. Every method is a no-op by default, so an
 * implementation overrides only what it records. Implementations must be thread-safe and fast:
 * they are called on the commit path.
 */
public interface TransactionMetrics {

    TransactionMetrics NONE = new TransactionMetrics() { };

    /** A transaction was written (pending or queued). */
    default void started() { }

    /** A transaction owned by this process reached {@code done}; {@code latency} from start or claim. */
    default void committed(Duration latency) { }

    /** A transaction owned by this process reached {@code canceled}. */
    default void canceled(String reason) { }

    /** A stale transaction was taken over from another owner. */
    default void takeover() { }

    /** Recovery finished a transaction it took over. */
    default void recovered(TransactionState outcome) { }

    /** A claim or state change was lost to another process. */
    default void conflict() { }

    /** This process found that it no longer owned a transaction it was driving. */
    default void leaseLost() { }

    /** An interactive transaction ended (committed, read only, refused or timed out) after its body ran {@code attempts} times. */
    default void interactiveAttempts(int attempts) { }

    /** An attempt of an interactive transaction lost a conflict of {@code kind} (its body runs again, or the timeout ends it). */
    default void interactiveConflict(ConflictKind kind) { }
}
