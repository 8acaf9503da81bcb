package io.mongo2pc.internal.recovery;

import com.mongodb.MongoException;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.UnreadableTransactionException;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.tutorial.WritesInDoubt;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.ServerClock;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;

import static io.mongo2pc.TransactionState.APPLIED;
import static io.mongo2pc.TransactionState.CANCELING;
import static io.mongo2pc.TransactionState.PENDING;

/**
 * Recovery passes: open transactions whose owner's lease has run out are taken over and finished,
 * then what late copies of inserts left is removed ({@link WritesInDoubt#sweep}). Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class Recovery {
    private static final Logger log = LoggerFactory.getLogger(Recovery.class);
    private static final int RECOVERY_BATCH = 500;
    /** A recovery pass stops after this many transactions in a row failed (the database is failing, not them). */
    private static final int MAX_RECOVERY_FAILURES_IN_A_ROW = 3;

    private final TransactionStore store;
    private final ServerClock clock;
    private final Retrier retrier;
    private final WritesInDoubt writesInDoubt;
    private final TakeOver takeOver;

    public Recovery(TransactionStore store, ServerClock clock, Retrier retrier, WritesInDoubt writesInDoubt, TakeOver takeOver) {
        this.store = store;
        this.clock = clock;
        this.retrier = retrier;
        this.writesInDoubt = writesInDoubt;
        this.takeOver = takeOver;
    }

    /**
     * One pass over open transactions not modified for {@code olderThan} (judged by the server's
     * clock): each is taken over (epoch + 1) and driven to its end: {@code pending} and
     * {@code applied} roll forward, {@code canceling} finishes its undo; a commit written after its
     * deadline ({@link LateCommit}) is repaired to canceled and undone instead. A transaction is never
     * taken over before its owner's own lease has run out, whatever {@code olderThan} says: that is
     * what fences a paused owner (see {@link Participants}); such a one is reported as not stale. A
     * transaction that stores no lease of its own (written by hand after the tutorial) counts as
     * holding {@code leaseIfNone}.
     */
    public RecoveryReport recover(Duration olderThan, Duration leaseIfNone) {
        Instant now = retrier.call("read clock", null, null, clock::now);
        List<Document> stale = retrier.call("find stale", null, null,
                () -> store.stale(List.of(PENDING, APPLIED, CANCELING), now.minus(olderThan), RECOVERY_BATCH));
        int rolledForward = 0;
        int canceled = 0;
        int skipped = 0;
        int failed = 0;
        int failedInARow = 0;
        List<RecoveryReport.NotStale> notStale = new ArrayList<>();
        for (Document seen : stale) {
            Instant staleBefore = staleBefore(seen, now, olderThan, leaseIfNone);
            Date modified = seen.getDate(Fields.LAST_MODIFIED);
            if (modified != null && modified.toInstant().isAfter(staleBefore)) {
                notStale.add(new RecoveryReport.NotStale(seen.get(Fields.ID),
                        modified.toInstant().plus(Duration.between(staleBefore, now))));
                skipped++;
                continue;
            }
            Optional<TransactionOutcome> outcome;
            try {
                outcome = takeOver.takeOver(seen, staleBefore, null);
                failedInARow = 0;
            } catch (UnreadableTransactionException e) {
                log.warn("cannot recover transaction {}: {}", seen.get(Fields.ID), e.getMessage());
                failed++;
                skipped++;
                continue;
            } catch (TransactionException | MongoException e) {
                // One transaction that cannot be finished now (a target down, an outcome unknown)
                // must not keep the others waiting: it stays stale and the next pass tries again.
                // Several in a row: the database itself is failing, so the pass stops and says so.
                if (++failedInARow >= MAX_RECOVERY_FAILURES_IN_A_ROW) {
                    throw e;
                }
                log.warn("recovery of transaction {} failed, left to the next pass: {}", seen.get(Fields.ID), e.toString());
                failed++;
                skipped++;
                continue;
            }
            if (outcome.isEmpty()) {
                skipped++; // another process took it over first
            } else if (outcome.get().isCommitted()) {
                rolledForward++;
            } else {
                canceled++;
            }
        }
        List<RecoveryReport.LateInsert> removed = writesInDoubt.sweep(now);
        if (!removed.isEmpty()) {
            log.info("recovery deleted {} documents left by late copies of inserts of ended transactions", removed.size());
        }
        return new RecoveryReport(rolledForward, canceled, skipped, failed, notStale, removed.size(), removed);
    }

    /**
     * A transaction is stale once unchanged for {@code olderThan} and for its owner's lease, or
     * {@code leaseIfNone} if it stores none.
     */
    static Instant staleBefore(Document seen, Instant now, Duration olderThan, Duration leaseIfNone) {
        Long leaseMs = TransactionStore.leaseOf(seen);
        Duration lease = leaseMs == null ? leaseIfNone : Duration.ofMillis(leaseMs);
        return now.minus(lease.compareTo(olderThan) < 0 ? olderThan : lease);
    }
}
