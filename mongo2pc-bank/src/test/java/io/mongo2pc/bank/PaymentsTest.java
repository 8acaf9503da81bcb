package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

class PaymentsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Payments payments;
    Bank bank;

    /** The manager's settings for these tests (a subclass runs them under the two-round commit). */
    protected TransactionManagerBuilder configured() {
        return Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client())
                .database(mongo.database()));
    }

    @BeforeEach
    void setUp() {
        manager = configured().build();
        bank = new Bank(manager);
        payments = new Payments(manager);
        bank.createAccount("alice", 100L);
        payments.createOrder("o1", 30L);
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void pay_marksTheOrderPaid_debitsTheAccount_andRecordsThePayment() {
        TransactionOutcome outcome = payments.pay("o1", "alice");

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(order().getString("state")).isEqualTo("Paid");
        assertThat(balance()).isEqualTo(70L);
        assertThat(db().getCollection("payments").find(new Document("_id", "pay-o1")).first())
                .containsEntry("order", "o1").containsEntry("account", "alice").containsEntry("amount", 30L);
        mongo.invariants().expectTotal(mongo.database(), 70L);
    }

    @Test
    void pay_twice_cancelsTheSecondWithNothingInEffect() {
        payments.pay("o1", "alice");

        TransactionOutcome second = payments.pay("o1", "alice");

        assertThat(second.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(second.reason()).contains("o1");
        assertThat(second.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(balance()).isEqualTo(70L);
        assertThat(db().getCollection("payments").countDocuments()).isEqualTo(1);
        mongo.invariants().expectTotal(mongo.database(), 70L);
    }

    @Test
    void pay_insufficientFunds_cancels_orderStaysUnPaid_noPaymentRecord() {
        payments.createOrder("o2", 500L);

        TransactionOutcome outcome = payments.pay("o2", "alice");

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("alice");
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
        assertThat(db().getCollection("orders").find(new Document("_id", "o2")).first().getString("state")).isEqualTo("UnPaid");
        assertThat(db().getCollection("payments").countDocuments()).isZero();
        assertThat(balance()).isEqualTo(100L);
    }

    @Test
    void pay_unknownOrder_isCanceledWithDocumentMissing_notRefusedAsBadInput() {
        // Regression (found by an independent check): an unknown order was an
        // InvalidTransactionException thrown before any transaction, unlike every other refusal.
        TransactionOutcome outcome = payments.pay("no-such-order", "alice");

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.DOCUMENT_MISSING);
        assertThat(outcome.reason()).contains("no-such-order");
        assertThat(manager.inspect(outcome.id()).orElseThrow().reasonCode()).isEqualTo(ReasonCode.DOCUMENT_MISSING);
        assertThat(db().getCollection("orders").find(new Document("_id", "no-such-order")).first()).isNull();
        assertThat(db().getCollection("payments").countDocuments()).isZero();
        assertThat(balance()).isEqualTo(100L);
    }

    @Test
    void pay_orderCreatedJustAfterItWasReadMissing_isNotPaidWithoutItsDebit() {
        // The order is read only for its total; the transaction's guard decides. An order that
        // appears between that read and the transaction must not end up Paid without a debit.
        java.util.concurrent.atomic.AtomicBoolean create = new java.util.concurrent.atomic.AtomicBoolean(true);
        TransactionManager racing = configured().crashHook((point, id) -> {
                    if (point.equals(CrashPoint.before(CrashPoint.Step.INSERT, -1)) && create.getAndSet(false)) {
                        payments.createOrder("o3", 30L);
                    }
                }).build();

        TransactionOutcome outcome = new Payments(racing).pay("o3", "alice");

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(db().getCollection("orders").find(new Document("_id", "o3")).first().getString("state")).isEqualTo("UnPaid");
        assertThat(balance()).isEqualTo(100L);
    }

    @Test
    void pay_sameTransactionIdTwice_paysOnce() {
        TransactionOutcome first = payments.pay("checkout-7", "o1", "alice", null);
        TransactionOutcome again = payments.pay("checkout-7", "o1", "alice", null);

        assertThat(first.state()).isEqualTo(TransactionState.DONE);
        assertThat(again).isEqualTo(first);
        assertThat(balance()).isEqualTo(70L);
        mongo.invariants().expectTotal(mongo.database(), 70L);
    }

    com.mongodb.client.MongoDatabase db() {
        return mongo.client().getDatabase(mongo.database());
    }

    private Document order() {
        return db().getCollection("orders").find(new Document("_id", "o1")).first();
    }

    long balance() {
        return db().getCollection("accounts").find(new Document("_id", "alice")).first().getLong("balance");
    }
}
