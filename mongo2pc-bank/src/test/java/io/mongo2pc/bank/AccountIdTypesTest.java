package io.mongo2pc.bank;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Account ids of every accepted kind (string, int, long, ObjectId). MongoDB matches an int and a
 * long of the same value as the same _id, so the bank must too: the same account is refused as
 * a transfer to itself, and an existing account is found whichever integer type names it.
 */
class AccountIdTypesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Bank bank;

    @BeforeEach
    void setUp() {
        manager = Bank.configure(TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())).build();
        bank = new Bank(manager);
    }

    private long balance(Object id) {
        return ((Number) bank.accounts().find(new Document("_id", id)).first().get("balance")).longValue();
    }

    @Test
    void transfer_betweenObjectIdAndIntegerAccounts_isDone() {
        ObjectId a = new ObjectId();
        bank.createAccount(a, 100L);
        bank.createAccount(7, 100L);
        mongo.invariants().expectTotal(mongo.database(), 200L);

        TransactionOutcome outcome = bank.transfer(a, 7, 40L);

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(balance(a)).isEqualTo(60L);
        assertThat(balance(7)).isEqualTo(140L);
    }

    @Test
    void transfer_intAndLongOfTheSameValue_isRefusedAsTheSameAccount() {
        bank.createAccount(1, 100L);
        mongo.invariants().expectTotal(mongo.database(), 100L);

        assertThatThrownBy(() -> bank.transfer(1, 1L, 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("same account");
        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isZero();
    }

    @Test
    void transfer_accountCreatedWithIntNamedByLong_isFound() {
        bank.createAccount(1, 100L);
        bank.createAccount(2, 100L);
        mongo.invariants().expectTotal(mongo.database(), 200L);

        TransactionOutcome outcome = bank.transfer(1L, 2, 30L);

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(balance(1)).isEqualTo(70L);
        assertThat(balance(2L)).isEqualTo(130L);
    }

    @Test
    void createAccount_intAndLongOfTheSameValue_isADuplicate() {
        bank.createAccount(5, 100L);
        mongo.invariants().expectTotal(mongo.database(), 100L);

        assertThatThrownBy(() -> bank.createAccount(5L, 1L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("already exists");
    }
}
