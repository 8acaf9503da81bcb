package io.mongo2pc.bank;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An account has a scale, the decimal places of its balance as created ({@code 10.00}: 2,
 * {@code 1000}: 0): an amount with more decimal places than an account it touches allows is bad
 * input, refused before anything is written, and an allowed amount keeps every balance in its scale.
 */
class AccountScaleTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Bank bank;

    @BeforeEach
    void setUp() {
        manager = Bank.configure(TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())).build();
        bank = new Bank(manager);
    }

    private static Decimal128 dec(String text) {
        return new Decimal128(new BigDecimal(text));
    }

    private Object balance(String id) {
        return bank.accounts().find(new Document("_id", id)).first().get("balance");
    }

    @Test
    void transfer_fractionOfAWholeUnitAccount_isRefused_andNothingWritten() {
        bank.createAccount("A", 1000L);
        bank.createAccount("B", 0L);

        assertThatThrownBy(() -> bank.transfer("A", "B", Amounts.parse("1.505")))
                .isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("1.505 has 3 decimal places")
                .hasMessageContaining("account A allows 0");
        assertThatThrownBy(() -> bank.submit("A", "B", Amounts.parse("0.5")))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("has 1 decimal place,");

        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isZero();
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(0L);
        mongo.invariants().expectTotal(mongo.database(), 1000L);
    }

    @Test
    void transfer_withinTheScale_keepsBothBalancesInTheirScale() {
        bank.createAccount("A", dec("10.00"));
        bank.createAccount("B", dec("5.00"));

        assertThat(bank.transfer("A", "B", Amounts.parse("1.5")).state()).isEqualTo(TransactionState.DONE);
        assertThat(bank.transfer("A", "B", 2L).state()).isEqualTo(TransactionState.DONE);

        assertThat(balance("A").toString()).isEqualTo("6.50");
        assertThat(balance("B").toString()).isEqualTo("8.50");
        assertThatThrownBy(() -> bank.transfer("A", "B", Amounts.parse("0.005")))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account A allows 2");
        mongo.invariants().expectTotal(mongo.database(), dec("15.00"));
    }

    @Test
    void transfer_wholeAmountWrittenAsADecimal_keepsAWholeUnitAccountWhole() {
        bank.createAccount("A", 1000L);
        bank.createAccount("B", dec("0.00"));

        assertThat(bank.transfer("A", "B", Amounts.parse("5.00")).state()).isEqualTo(TransactionState.DONE);

        assertThat(balance("A")).isEqualTo(995L);
        assertThat(balance("B").toString()).isEqualTo("5.00");
        mongo.invariants().expectTotal(mongo.database(), 1000L);
    }

    @Test
    void transfer_betweenScales_theSmallerScaleDecides() {
        bank.createAccount("A", dec("10.00"));
        bank.createAccount("B", 100L);

        assertThatThrownBy(() -> bank.transfer("A", "B", Amounts.parse("0.50")))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account B allows 0");
        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isZero();
        mongo.invariants().expectTotal(mongo.database(), dec("110.00"));
    }

    @Test
    void accountsWrittenByHand_keepTheScaleOfTheirStoredBalance() {
        // No recorded scale: a tutorial's mongo shell writes doubles, a driver int32 or Decimal128.
        bank.accounts().insertMany(List.of(
                new Document("_id", "D").append("balance", 1000.0).append("pendingTransactions", List.of()),
                new Document("_id", "I").append("balance", 1000).append("pendingTransactions", List.of()),
                new Document("_id", "X").append("balance", dec("795.245")).append("pendingTransactions", List.of()),
                new Document("_id", "Y").append("balance", dec("0.000")).append("pendingTransactions", List.of())));

        assertThat(bank.transfer("D", "I", 10L).state()).isEqualTo(TransactionState.DONE);
        assertThat(bank.transfer("X", "Y", Amounts.parse("0.245")).state()).isEqualTo(TransactionState.DONE);
        assertThatThrownBy(() -> bank.transfer("I", "X", Amounts.parse("0.5")))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account I allows 0");

        assertThat(balance("X").toString()).isEqualTo("795.000");
        assertThat(balance("Y").toString()).isEqualTo("0.245");
        mongo.invariants().expectTotal(mongo.database(), dec("2795.245"));
    }

    @Test
    void createAccount_withAScale_storesTheBalanceInIt_andRefusesMorePlaces() {
        bank.createAccount("C", 10L, 2);
        bank.createAccount("W", dec("7.0"), 0);

        assertThat(balance("C").toString()).isEqualTo("10.00");
        assertThat(balance("W")).isEqualTo(7L);
        assertThatThrownBy(() -> bank.createAccount("E", dec("1.505"), 2))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("1.505 has 3 decimal places");
        assertThatThrownBy(() -> bank.createAccount("F", 1L, -1))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("scale");
        assertThat(bank.accounts().countDocuments()).isEqualTo(2);
        mongo.invariants().expectTotal(mongo.database(), dec("17.00"));
    }

    @Test
    void pay_orderTotalWithMoreDecimalPlacesThanTheAccount_isRefused_andNothingWritten() {
        Payments payments = new Payments(manager);
        bank.createAccount("alice", 100L);
        mongo.client().getDatabase(mongo.database()).getCollection(Payments.ORDERS).insertOne(new Document("_id", "o1").append("state", "UnPaid").append("total", dec("1.505")));

        assertThatThrownBy(() -> payments.pay("o1", "alice"))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("account alice allows 0");

        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isZero();
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection(Payments.ORDERS).find(new Document("_id", "o1")).first()).containsEntry("state", "UnPaid");
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }
}
