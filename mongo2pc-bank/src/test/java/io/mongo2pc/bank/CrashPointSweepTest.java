package io.mongo2pc.bank;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;

/**
 * Core's crash-point sweep ({@link io.mongo2pc.sweeps.CrashPointSweepTest}) on the bank's
 * transfers: stored in the tutorial's shape (source, destination, value; no operations), so every
 * recovery, at every crash point and after a second crash, reads the operations back through
 * {@link TransferCodec}.
 */
class CrashPointSweepTest extends io.mongo2pc.sweeps.CrashPointSweepTest {

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return Bank.configure(builder);
    }

    @Override
    protected TransactionOutcome transfer(String db, TransactionManager manager) {
        return new Bank(manager).transfer("A", "B", 100L);
    }
}
