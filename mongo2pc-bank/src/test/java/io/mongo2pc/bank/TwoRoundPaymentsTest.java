package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every payment test under the two-round commit (the order's update, the debit and the payment's
 * insert prepared in one round, committed in the next), and what a payment shows before its
 * commit point.
 */
class TwoRoundPaymentsTest extends PaymentsTest {

    @Override
    protected TransactionManagerBuilder configured() {
        return super.configured().twoRoundCommit(true);
    }

    /**
     * Under the two-round commit the order appears once the prepares were sent, before the
     * transaction document is written: either it is paid with its debit, or canceled with nothing
     * in effect; never Paid without the debit.
     */
    @Override
    @Test
    void pay_orderCreatedJustAfterItWasReadMissing_isNotPaidWithoutItsDebit() {
        AtomicBoolean create = new AtomicBoolean(true);
        TransactionManager racing = configured().crashHook((point, id) -> {
            if (TestManagers.beforeTheDocument(point) && create.getAndSet(false)) {
                payments.createOrder("o3", 30L);
            }
        }).build();

        TransactionOutcome outcome = new Payments(racing).pay("o3", "alice");

        String state = db().getCollection("orders").find(new Document("_id", "o3")).first().getString("state");
        if (outcome.state() == TransactionState.DONE) {
            assertThat(state).isEqualTo("Paid");
            assertThat(balance()).isEqualTo(70L);
            mongo.invariants().expectTotal(mongo.database(), 70L);
        } else {
            assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
            assertThat(state).isEqualTo("UnPaid");
            assertThat(balance()).isEqualTo(100L);
        }
    }

    @Test
    void pay_beforeItsCommitPoint_nothingOfItIsCommitted_theDebitOnlyHeld() {
        DocumentRef order = DocumentRef.of(mongo.database(), Payments.ORDERS, "o1");
        DocumentRef account = DocumentRef.of(mongo.database(), Bank.ACCOUNTS, "alice");
        DocumentRef payment = DocumentRef.of(mongo.database(), Payments.PAYMENTS, "pay-o1");
        List<Object> seen = new ArrayList<>();
        TransactionManager looking = configured().crashHook((point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                List<Optional<Document>> cut = manager.readCommitted(List.of(order, account, payment));
                seen.add(cut.get(0).orElseThrow().getString("state"));
                seen.add(cut.get(1).orElseThrow().getLong("balance"));
                seen.add(cut.get(2).isPresent());
                seen.add(db().getCollection("orders").find(new Document("_id", "o1")).first().getString("state"));
                seen.add(balance());
            }
        }).build();

        TransactionOutcome outcome = new Payments(looking).pay("o1", "alice");

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        // committed view: unpaid, full balance, no payment; stored: the order's change (round 1b, its
        // before-image in its lock), the debit held
        assertThat(seen).containsExactly("UnPaid", 100L, false, "Paid", 70L);
        assertThat(manager.readCommitted(order).orElseThrow().getString("state")).isEqualTo("Paid");
        mongo.invariants().expectTotal(mongo.database(), 70L);
    }
}
