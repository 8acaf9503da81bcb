package io.mongo2pc.bank;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TransferTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Bank bank;

    @BeforeEach
    void setUp() {
        manager = Bank.configure(TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())).build();
        bank = new Bank(manager);
        bank.createAccount("A", 1000L);
        bank.createAccount("B", 1000L);
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    @Test
    void transfer_movesMoneyAndLeavesTheTutorialsDocuments() {
        TransactionOutcome outcome = bank.transfer("A", "B", 100L);

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(bank.accounts().find(new Document("_id", "A")).first())
                .containsEntry("balance", 900L).containsEntry("pendingTransactions", java.util.List.of());
        assertThat(bank.accounts().find(new Document("_id", "B")).first()).containsEntry("balance", 1100L);
        Document tx = manager.inspect(outcome.id()).orElseThrow().document();
        assertThat(tx).containsEntry("source", "A").containsEntry("destination", "B").containsEntry("value", 100L)
                .containsEntry("state", "done").containsKey("lastModified");
    }

    @Test
    void transfer_insufficientFunds_cancelsAndRestoresBalances() {
        TransactionOutcome outcome = bank.transfer("A", "B", 1001L);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).isEqualTo("A has balance 1000, the debit needs 1001");
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
        assertThat(manager.inspect(outcome.id()).orElseThrow().document()).containsEntry("code", "INSUFFICIENT_FUNDS");
        assertThat(bank.accounts().find(new Document("_id", "A")).first()).containsEntry("balance", 1000L);
        assertThat(bank.accounts().find(new Document("_id", "B")).first()).containsEntry("balance", 1000L);
    }

    @Test
    void transfer_decimalAmountJustAboveALongBalance_cancels_notOverdraws() {
        // Regression (found in review): the embedded server compared the long balance with the
        // Decimal128 amount as doubles, so the guard 1000 >= 1000.000000000000001 held. A transfer
        // no longer takes such an amount to a whole-unit account (its scale), a generic debit that
        // allows a type change does.
        Decimal128 justAbove = new Decimal128(new java.math.BigDecimal("1000.000000000000001"));
        TransactionOutcome outcome = manager.run(java.util.List.of(io.mongo2pc.Operation.increment(
                io.mongo2pc.DocumentRef.of(mongo.database(), Bank.ACCOUNTS, "A"), "balance", io.mongo2pc.Numbers.negate(justAbove),
                new Document("balance", new Document("$gte", justAbove))).with(io.mongo2pc.Operation.Flag.ALLOW_TYPE_CHANGE)));

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(bank.accounts().find(new Document("_id", "A")).first()).containsEntry("balance", 1000L);
        assertThatThrownBy(() -> bank.transfer("A", "B", justAbove)).isInstanceOf(InvalidTransactionException.class);
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    @Test
    void transfer_unknownAccount_isRefusedBeforeAnyWrite() {
        assertThatThrownBy(() -> bank.transfer("A", "Z", 10L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("Z does not exist");
        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isZero();
    }

    @Test
    void transfer_sameIdTwice_movesTheMoneyOnce() {
        TransactionOutcome first = bank.transfer("t-1", "A", "B", 100L);
        TransactionOutcome again = bank.transfer("t-1", "A", "B", 100L);

        assertThat(again).isEqualTo(first);
        assertThat(first.id()).isEqualTo("t-1");
        assertThat(bank.accounts().find(new Document("_id", "A")).first()).containsEntry("balance", 900L);
        assertThatThrownBy(() -> bank.transfer("t-1", "A", "B", 200L))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("already used");
    }

    @Test
    void submit_sameIdTwice_queuesOnce() {
        assertThat(bank.submit("q-1", "A", "B", 100L)).isEqualTo("q-1");
        assertThat(bank.submit("q-1", "A", "B", 100L)).isEqualTo("q-1");

        assertThat(mongo.transactions(manager.settings().database()).countDocuments()).isEqualTo(1);
        assertThat(manager.claimAndRun()).hasValueSatisfying(o -> assertThat(o.isDone()).isTrue());
        assertThat(manager.claimAndRun()).isEmpty();
        assertThat(bank.accounts().find(new Document("_id", "B")).first()).containsEntry("balance", 1100L);
    }
}
