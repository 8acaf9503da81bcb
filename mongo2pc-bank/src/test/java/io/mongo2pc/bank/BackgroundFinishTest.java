package io.mongo2pc.bank;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;

/**
 * Core's tests of {@code finishInBackground} ({@link io.mongo2pc.sweeps.BackgroundFinishTest}) on
 * the bank's transfers: stored in the tutorial's shape, so the recovering instance reads the
 * operations of a transfer whose finisher crashed back through {@link TransferCodec}.
 */
class BackgroundFinishTest extends io.mongo2pc.sweeps.BackgroundFinishTest {

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return Bank.configure(builder);
    }

    @Override
    protected TransactionOutcome transfer(TransactionManager manager, String db, String source, String destination, long amount) {
        return new Bank(manager).transfer(source, destination, amount);
    }
}
