package io.mongo2pc.bank;

import io.mongo2pc.CancelResult;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Regression: a credit is in effect (and spendable, as in the tutorial) before its transaction
 * commits. Canceling a transfer whose debit and credit were both applied would undo a credit
 * that another transfer had already spent, and overdraw. Such a transfer is rolled forward.
 */
class CancelAfterCreditSpentTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void operatorCancel_ofTransferWithEveryOperationApplied_rollsItForward_neverOverdraws() {
        String db = mongo.database();
        Bank bank = new Bank(Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)).build());
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);
        bank.createAccount("C", 0L);
        mongo.invariants().expectTotal(db, 100L);
        // given: A -> B 100 applied on both sides, its owner dead just before the commit point
        TransactionManager dying = Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .crashHook((p, id) -> {
                    if (p.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                        throw new IllegalStateException("died");
                    }
                })).build();
        assertThatThrownBy(() -> new Bank(dying).transfer("A", "B", 100L)).hasMessage("died");
        Object id = mongo.transactions(dying.settings().database()).find(new Document("source", "A")).first().get("_id");
        // and B spent the credit meanwhile
        assertThat(bank.transfer("B", "C", 100L).isDone()).isTrue();
        mongo.expireLeases(db);

        // when an operator cancels it
        TransactionManager operator = Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client())
                .database(db).application("operator")).build();

        // then it is rolled forward, and no account is overdrawn
        CancelResult result = operator.cancel(id, "operator");
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.ROLLED_FORWARD);
        assertThat(result.reason()).contains("rolled forward");
        assertThat(operator.inspect(id).orElseThrow().state()).isEqualTo(TransactionState.DONE);
        for (Document account : bank.accounts().find()) {
            assertThat(account.getLong("balance")).as(account.toJson()).isNotNegative();
        }
    }
}
