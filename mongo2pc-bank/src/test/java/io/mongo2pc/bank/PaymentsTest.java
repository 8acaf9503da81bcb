package io.mongo2pc.bank;

import io.mongo2pc.TransactionManager;
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

    @BeforeEach
    void setUp() {
        manager = Bank.configure(TransactionManager.builder().target("default", mongo.client()).database(mongo.database())).build();
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
        assertThat(db().getCollection("orders").find(new Document("_id", "o2")).first().getString("state")).isEqualTo("UnPaid");
        assertThat(db().getCollection("payments").countDocuments()).isZero();
        assertThat(balance()).isEqualTo(100L);
    }

    private com.mongodb.client.MongoDatabase db() {
        return mongo.client().getDatabase(mongo.database());
    }

    private Document order() {
        return db().getCollection("orders").find(new Document("_id", "o1")).first();
    }

    private long balance() {
        return db().getCollection("accounts").find(new Document("_id", "alice")).first().getLong("balance");
    }
}
