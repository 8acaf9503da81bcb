package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManagerBuilder;

/**
 * {@link ZombieOwnerTest} on the two-round commit: an owner paused between any two of its writes
 * once its first prepare was sent, past its lease, while another instance finishes or cancels the
 * transaction, changes nothing when it resumes: its prepares fail their deadline, its commit and
 * done their epoch, its releases find no entry. Paused before its commit insert (prepares, no
 * document), the other instance's sweep undoes the prepares behind a tombstone once the owner's
 * deadline has passed, and the resumed owner's insert meets it: canceled.
 */
class TwoRoundZombieOwnerTest extends ZombieOwnerTest {
    /** The library's default rules (the two-round commit), finished inline. */
    @Override
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.finishInBackground(false);
    }

    /** Before its prepares are sent, nothing or only prepares exist (the sweep resolves those: see above). */
    @Override
    protected boolean beforeTheDocument(CrashPoint point) {
        return point.phase() == CrashPoint.Phase.BEFORE
                && (point.step() == CrashPoint.Step.INSERT || point.step() == CrashPoint.Step.APPLY);
    }
}
