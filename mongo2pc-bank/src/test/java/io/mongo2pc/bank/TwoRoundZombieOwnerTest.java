package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManagerBuilder;

/**
 * {@link ZombieOwnerTest} on the two-round commit: an owner paused between any two of its writes
 * once its transaction document exists (after round 1's insert), past its lease, while another
 * instance finishes or cancels the transaction, changes nothing when it resumes: its prepares fail
 * their deadline, its commit and done their epoch, its releases find no entry. The points before
 * the insert (nothing or only prepares written) are {@code TwoRoundLateCopyTest}'s.
 */
class TwoRoundZombieOwnerTest extends ZombieOwnerTest {
    /** The library's default rules (the two-round commit), finished inline. */
    @Override
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.finishInBackground(false);
    }

    /** Round 1 sends the prepares, then the insert: before either is sent, nothing or only prepares exist. */
    @Override
    protected boolean beforeTheDocument(CrashPoint point) {
        return point.phase() == CrashPoint.Phase.BEFORE
                && (point.step() == CrashPoint.Step.INSERT || point.step() == CrashPoint.Step.APPLY);
    }
}
