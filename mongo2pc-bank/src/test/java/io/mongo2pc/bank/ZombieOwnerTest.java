package io.mongo2pc.bank;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;

/**
 * Core's paused-owner sweep ({@link io.mongo2pc.sweeps.ZombieOwnerTest}) on the bank's transfers:
 * stored in the tutorial's shape, so the instance that finishes or cancels the transaction while
 * its owner is paused reads the operations back through {@link TransferCodec}.
 */
class ZombieOwnerTest extends io.mongo2pc.sweeps.ZombieOwnerTest {

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return Bank.configure(builder);
    }

    @Override
    protected TransactionOutcome start(TransactionManager owner) {
        return new Bank(owner).transfer("A", "B", 100L);
    }
}
