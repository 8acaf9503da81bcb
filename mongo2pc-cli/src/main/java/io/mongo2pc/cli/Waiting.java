package io.mongo2pc.cli;

import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionView;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * Open transactions recovery must leave because their owner's own lease has not run out: how
 * many, until when the last one waits, and that owner's lease (read from the transaction, not
 * this process's --lease). For {@code recover} and {@code worker --drain} to say why nothing happened.
 */
record Waiting(int count, Instant until, Duration lease) {
    /** The wait behind {@code notStale}, or null when nothing waits. */
    static Waiting of(TransactionManager manager, List<RecoveryReport.NotStale> notStale) {
        RecoveryReport.NotStale last = notStale.stream().filter(w -> w.leaseEnds() != null)
                .max(Comparator.comparing(RecoveryReport.NotStale::leaseEnds)).orElse(null);
        if (last == null) {
            return null;
        }
        Duration lease = manager.inspect(last.id()).map(TransactionView::lease).orElse(null);
        return new Waiting(notStale.size(), last.leaseEnds(), lease);
    }

    /** "2 not stale yet: their owner's lease of 1m runs out at ... (in about 42s)". */
    String describe() {
        long left = Math.max(0, Duration.between(Instant.now(), until).toSeconds());
        return count + " not stale yet: " + (count == 1 ? "its owner's lease" : "the last one's owner's lease")
                + (lease == null ? "" : " of " + DurationConverter.format(lease)) + " runs out at " + until
                + " (in about " + left + "s)";
    }
}
