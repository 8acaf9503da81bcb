package io.mongo2pc.bank;

import io.mongo2pc.TransactionManagerBuilder;

/**
 * {@link BackgroundFinishTest} on the two-round commit: sixteen threads whose transfers return at
 * the commit point and are all released and done once the manager closes; the finisher stopped at
 * each of its points (before and after each release and done) and the transfer rolled forward by
 * another instance; an acknowledgement lost at each of the finisher's writes. (Its releases carry
 * no deadline, so the base's test of releases refused past the owner's deadline does not apply.)
 */
class TwoRoundBackgroundFinishTest extends BackgroundFinishTest {
    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return super.configure(builder).twoRoundCommit(true);
    }

    /** Not a test here: two-round releases carry no deadline (anyone may roll a committed transaction forward). */
    @Override
    protected void finisherSendsItsReleasesAfterTheOwnersDeadline_theServerRefusesThem_andTheyAreRenewedAndSentAgain() {
    }
}
