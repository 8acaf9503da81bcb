package io.mongo2pc;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What one recovery pass did. Immutable.
 *
 * @param rolledForward      transactions it finished as done
 * @param canceled           transactions it finished as canceled, among them those whose owner died
 *                           before writing their document (canceled behind a tombstone by the sweep)
 * @param skipped            open transactions it left: {@code notStale} ones, {@code failed} ones, and
 *                           ones another process took over first
 * @param failed             transactions it could not finish now (a target down, an outcome unknown,
 *                           operations it cannot read); the next pass tries again
 * @param notStale           transactions unchanged for the pass's {@code olderThan} whose owner's own
 *                           lease has not run out yet, each with when it does (server time)
 * @param lateInsertsRemoved documents it deleted that late copies of inserts left after their
 *                           transaction ended (such a document reads as never written)
 * @param lateInserts        those documents, each with the transaction whose insert's late copy left
 *                           it (a report built without them lists none)
 */
public record RecoveryReport(int rolledForward, int canceled, int skipped, int failed, List<NotStale> notStale,
                             int lateInsertsRemoved, List<LateInsert> lateInserts) {

    /** An open transaction whose owner's lease runs until {@code leaseEnds} (server time). */
    public record NotStale(Object id, Instant leaseEnds) { }

    /** A document that a late copy of transaction {@code transactionId}'s insert left, deleted by the pass. */
    public record LateInsert(DocumentRef document, Object transactionId) { }

    public RecoveryReport {
        notStale = List.copyOf(notStale);
        lateInserts = List.copyOf(lateInserts);
    }

    /** A pass that removed {@code lateInsertsRemoved} documents without saying which. */
    public RecoveryReport(int rolledForward, int canceled, int skipped, int failed, List<NotStale> notStale,
                          int lateInsertsRemoved) {
        this(rolledForward, canceled, skipped, failed, notStale, lateInsertsRemoved, List.of());
    }

    /** A pass that left nothing waiting and removed nothing. */
    public RecoveryReport(int rolledForward, int canceled, int skipped) {
        this(rolledForward, canceled, skipped, 0, List.of(), 0);
    }

    public RecoveryReport plus(RecoveryReport other) {
        List<NotStale> waiting = new ArrayList<>(notStale);
        waiting.addAll(other.notStale);
        List<LateInsert> removed = new ArrayList<>(lateInserts);
        removed.addAll(other.lateInserts);
        return new RecoveryReport(rolledForward + other.rolledForward, canceled + other.canceled, skipped + other.skipped,
                failed + other.failed, waiting, lateInsertsRemoved + other.lateInsertsRemoved, removed);
    }

    public int finished() {
        return rolledForward + canceled;
    }
}
