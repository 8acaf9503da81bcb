package io.mongo2pc;

import java.time.Duration;

/**
 * What {@link TransactionManager#prune(Duration, PruneOptions)} did, or with
 * {@link PruneOptions#dryRun()} would do. Immutable.
 *
 * @param done          {@code done} transactions pruned (or that would be)
 * @param canceled      {@code canceled} transactions pruned (or that would be); 0 unless
 *                      {@link PruneOptions#includeCanceled()}
 * @param canceledKept  canceled transactions old enough but kept because canceled ones were not included
 * @param dryRun        true if nothing was written
 * @param idsKept       true if each pruned transaction left a stub (its id and outcome) that answers
 *                      for its id; false with {@link PruneOptions#forgetIds()} (stubs of earlier
 *                      prunes as old are then deleted too, counted by their state)
 * @param minimumAge    the least age accepted without {@link PruneOptions#force()}: the longest lease
 *                      of the transactions' owners (and this manager's) plus the clock-skew margin
 */
public record PruneResult(long done, long canceled, long canceledKept, boolean dryRun, boolean idsKept, Duration minimumAge) {

    /** How many transactions were pruned (or would be): {@code done + canceled}. */
    public long pruned() {
        return done + canceled;
    }
}
