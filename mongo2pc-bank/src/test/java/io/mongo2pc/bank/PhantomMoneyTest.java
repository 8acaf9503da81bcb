package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.testing.LateInsertCopies;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression (found by an independent check): a late copy of a canceled transaction's insert of an
 * account ({@code {balance: 500, _m2pc: {tx, n, kind: "insert", until, at}}} with {@code at} after
 * {@code until}) read as absent through {@code readCommitted}, but {@link Bank#verify} counted it:
 * total 1,500 of 1,000, markers 0. The books now count committed state only, and name such a
 * document as a leftover until recovery removes it.
 */
class PhantomMoneyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void verify_accountLeftByALateInsertCopy_isALeftoverNotMoney_andRecoveryRemovesIt() throws Exception {
        // given an account of 1,000, and a late copy of a canceled insert of account "ghost" holding 500
        String db = mongo.database();
        TransactionManager manager = Bank.configure(TestManagers.builder(mongo.client(), db, "bank")).build();
        Bank bank = new Bank(manager);
        bank.createAccount("A", 1_000L);
        mongo.invariants().expectTotal(db, 1_000L);
        DocumentRef ghost = DocumentRef.of(db, Bank.ACCOUNTS, "ghost");
        TransactionOutcome canceled = LateInsertCopies.landAfterCancel(mongo.uri(), mongo.client(), db, ghost,
                new Document("balance", 500L), DocumentRef.of(db, Bank.ACCOUNTS, "A"));

        // when the books are checked
        Bank.Verification before = bank.verify(1_000L);

        // then the copy is no money, but a leftover of its transaction
        assertThat(before.total()).as("the total of committed balances").isEqualByComparingTo("1000");
        assertThat(before.accounts()).isEqualTo(1);
        assertThat(before.leftovers()).containsExactly(new Bank.Leftover("ghost", canceled.id(), "insert", true));
        assertThat(before.ok()).as("a leftover is not ok until recovery removes it").isFalse();

        // when recovery runs, then it removes the copy and says so, and the books are ok
        RecoveryReport report = manager.recover();
        assertThat(report.lateInserts()).containsExactly(new RecoveryReport.LateInsert(ghost, canceled.id()));
        Bank.Verification after = bank.verify(1_000L);
        assertThat(after.leftovers()).isEmpty();
        assertThat(after.ok()).as(after.toString()).isTrue();
    }
}
