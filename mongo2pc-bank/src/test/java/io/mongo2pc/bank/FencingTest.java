package io.mongo2pc.bank;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;

/**
 * Core's fencing tests ({@link io.mongo2pc.sweeps.FencingTest}) on the bank's transfers: stored in
 * the tutorial's shape, so the canceling operator, the recovering process and the one taking over
 * read the operations back through {@link TransferCodec}.
 */
class FencingTest extends io.mongo2pc.sweeps.FencingTest {

    @Override
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return Bank.configure(builder);
    }

    @Override
    protected TransactionOutcome transfer(TransactionManager manager, String source, String destination, long amount) {
        return new Bank(manager).transfer(source, destination, amount);
    }
}
