package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Guarantee 7: markers stay bounded. A hot account whose owners keep dying mid-transfer collects
 * one marker per half-done transfer; past the limit (maxMarkers) a new transfer waits up to the
 * conflict timeout and is then canceled (nothing in effect) instead of growing the list, and once
 * recovery has run the account is usable again.
 */
class MarkerBoundTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** Regression: nothing bounded pendingTransactions; 100 stuck transfers left 100 markers and the 101st added one more. */
    @Test
    void transfer_fromAccountWithHundredTransfersInFlight_isCanceledAndTheListDoesNotGrow() {
        // given: 100 owners died right after debiting A, each leaving its marker on A
        TransactionManager manager = Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client())
                .database(mongo.database()).maxMarkers(100).conflictTimeout(Duration.ofMillis(300))).build();
        Bank bank = new Bank(manager);
        bank.createAccount("A", 1_000L);
        bank.createAccount("B", 0L);
        mongo.invariants().expectTotal(mongo.database(), 1_000L);
        for (int i = 0; i < 100; i++) {
            AtomicBoolean armed = new AtomicBoolean(true);
            Bank dying = new Bank(Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client())
                    .database(mongo.database()).crashHook((point, id) -> {
                        if (point.equals(CrashPoint.after(Step.APPLY, 0)) && armed.compareAndSet(true, false)) {
                            throw new IllegalStateException("killed");
                        }
                    })).build());
            assertThatThrownBy(() -> dying.transfer("A", "B", 1L)).hasMessage("killed");
        }
        assertThat(markersOn(bank, "A")).isEqualTo(100);

        // when
        TransactionOutcome outcome = bank.transfer("A", "B", 1L);

        // then
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("pending transactions").contains("100");
        assertThat(markersOn(bank, "A")).isEqualTo(100);

        // and once the dead owners' leases have run out and recovery has run, the account works again
        mongo.expireLeases(mongo.database());
        assertThat(manager.recover(Duration.ZERO).rolledForward()).isEqualTo(100);
        assertThat(bank.transfer("A", "B", 1L).state()).isEqualTo(TransactionState.DONE);
        assertThat(bank.accounts().find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(899L);
    }

    private static int markersOn(Bank bank, String id) {
        return bank.accounts().find(new Document("_id", id)).first().getList("pendingTransactions", Object.class).size();
    }
}
