package io.mongo2pc.bank;

import io.mongo2pc.CancelResult;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every way a transfer ends canceled: a guard that does not hold (insufficient funds, a credit
 * that would overflow), an account that disappears between the existence check and the apply,
 * and an explicit cancel by an operator, which is allowed only before the commit point and never
 * over a live owner. Canceled always means: nothing in effect, no marker left.
 */
class CancelPathsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash(CrashPoint point) {
            super("injected crash at " + point);
        }
    }

    /** Throws once at {@code point}: the owning process dies there. */
    static CrashHook crashOnceAt(CrashPoint point) {
        AtomicBoolean armed = new AtomicBoolean(true);
        return (reached, id) -> {
            if (reached.equals(point) && armed.compareAndSet(true, false)) {
                throw new Crash(reached);
            }
        };
    }

    TransactionManager manager;
    Bank bank;

    @BeforeEach
    void setUp() {
        manager = newManager("bank", Duration.ofSeconds(30), CrashHook.NONE);
        bank = new Bank(manager);
        bank.createAccount("A", 1000L);
        bank.createAccount("B", 1000L);
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    private TransactionManager newManager(String application, Duration lease, CrashHook hook) {
        return Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), application).twoRoundCommit(false).finishInBackground(false).lease(lease).crashHook(hook)).build();
    }

    private long balance(String id) {
        return bank.accounts().find(new Document("_id", id)).first().getLong("balance");
    }

    private Document stored(Object txId) {
        return manager.inspect(txId).orElseThrow().document();
    }

    private Object onlyTransactionId() {
        return mongo.transactions(manager.settings().database()).find().first().get("_id");
    }

    // ---- guards ---------------------------------------------------------------------------------

    @Test
    void transfer_insufficientFunds_cancelsAndRestoresBalances() {
        TransactionOutcome outcome = bank.transfer("A", "B", 1001L);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).isEqualTo("A has balance 1000, the debit needs 1001");
        assertThat(stored(outcome.id())).containsEntry("state", "canceled").containsEntry("reason", outcome.reason());
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(1000L);
    }

    @Test
    void transfer_exactBalance_isDoneAndLeavesZero() {
        TransactionOutcome outcome = bank.transfer("A", "B", 1000L);

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(balance("A")).isZero();
        assertThat(balance("B")).isEqualTo(2000L);
    }

    @Test
    void transfer_creditWouldOverflowLongBalance_isCanceledWithNothingInEffect() {
        // given: B is 50 short of Long.MAX_VALUE
        bank.createAccount("RICH", Long.MAX_VALUE - 50);
        mongo.invariants().expectTotal(mongo.database(), new java.math.BigDecimal(Long.MAX_VALUE).add(java.math.BigDecimal.valueOf(1950)));

        // when
        TransactionOutcome outcome = bank.transfer("A", "RICH", 100L);

        // then: the credit guard refused it; the debit of A was undone
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("guard").contains("RICH");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("RICH")).isEqualTo(Long.MAX_VALUE - 50);

        // and exactly up to the limit still works
        assertThat(bank.transfer("A", "RICH", 50L).state()).isEqualTo(TransactionState.DONE);
        assertThat(balance("RICH")).isEqualTo(Long.MAX_VALUE);
        assertThat(bank.transfer("A", "RICH", 1L).state()).isEqualTo(TransactionState.CANCELED);
        assertThat(balance("A")).isEqualTo(950L);
        mongo.invariants().expectTotal(mongo.database(), new java.math.BigDecimal(Long.MAX_VALUE).add(java.math.BigDecimal.valueOf(1950)));
    }

    // ---- accounts that disappear --------------------------------------------------------------

    @Test
    void transfer_destinationDeletedAfterExistenceCheck_cancelsAndRestoresSource() {
        // given: B is deleted after the transfer checked it exists and debited A
        TransactionManager racing = newManager("racing", Duration.ofSeconds(30), (point, id) -> {
            if (point.equals(CrashPoint.before(Step.APPLY, 1))) {
                bank.accounts().deleteOne(new Document("_id", "B"));
            }
        });
        mongo.invariants().expectTotal(mongo.database(), 1000L);

        // when
        TransactionOutcome outcome = new Bank(racing).transfer("A", "B", 100L);

        // then
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("does not exist").contains("B");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(bank.accounts().find(new Document("_id", "A")).first().getList("pendingTransactions", Object.class)).isEmpty();
    }

    @Test
    void transfer_sourceDeletedAfterExistenceCheck_cancelsWithNothingApplied() {
        TransactionManager racing = newManager("racing", Duration.ofSeconds(30), (point, id) -> {
            if (point.equals(CrashPoint.before(Step.APPLY, 0))) {
                bank.accounts().deleteOne(new Document("_id", "A"));
            }
        });
        mongo.invariants().expectTotal(mongo.database(), 1000L);

        TransactionOutcome outcome = new Bank(racing).transfer("A", "B", 100L);

        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("does not exist").contains("A");
        assertThat(balance("B")).isEqualTo(1000L);
    }

    // ---- explicit cancel ------------------------------------------------------------------------

    @Test
    void cancel_queuedTransaction_isCanceledAtOnceAndNeverRuns() {
        // given
        Object id = bank.submit("A", "B", 100L);

        // when
        CancelResult result = manager.cancel(id, "customer changed their mind");

        // then
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.CANCELED);
        assertThat(result.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(result.reason()).isEqualTo("customer changed their mind");
        assertThat(result.reasonCode()).isEqualTo(ReasonCode.CANCELED_BY_OPERATOR);
        assertThat(stored(id)).containsEntry("state", "canceled").containsEntry("reason", "customer changed their mind")
                .containsEntry("code", "CANCELED_BY_OPERATOR");
        assertThat(manager.claimAndRun()).isEmpty();
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(1000L);
    }

    @Test
    void cancel_pendingTransactionWhoseOwnerLeaseExpired_undoesWhatWasApplied() throws Exception {
        // given: an owner with a short lease dies after debiting A
        TransactionManager owner = newManager("owner", Duration.ofMillis(200), crashOnceAt(CrashPoint.after(Step.APPLY, 0)));
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).isInstanceOf(Crash.class);
        Object id = onlyTransactionId();
        assertThat(balance("A")).isEqualTo(900L);
        Thread.sleep(400);

        // when: another instance (same lease setting) cancels it
        TransactionManager operator = newManager("operator", Duration.ofMillis(200), CrashHook.NONE);
        CancelResult result = operator.cancel(id, "operator");

        // then
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.CANCELED);
        assertThat(result.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(stored(id)).containsEntry("state", "canceled").containsEntry("reason", "operator")
                .containsEntry("code", "CANCELED_BY_OPERATOR")
                .containsEntry("epoch", 2L).containsEntry("application", "operator");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(1000L);
    }

    @Test
    void cancel_pendingTransactionWithLiveOwner_isRefused() {
        // given: an owner (30 s lease) stopped after debiting A, its lease still running
        TransactionManager owner = newManager("owner", Duration.ofSeconds(30), crashOnceAt(CrashPoint.after(Step.APPLY, 0)));
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).isInstanceOf(Crash.class);
        Object id = onlyTransactionId();

        // when
        CancelResult result = manager.cancel(id, "operator");

        // then
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.OWNER_ALIVE);
        assertThat(result.reason()).contains("pending").contains("owned by").contains("lease");
        assertThat(result.leaseEnds()).isAfter(manager.serverTime().plusSeconds(20));
        assertThat(stored(id)).containsEntry("state", "pending").containsEntry("epoch", 1L);
        assertThat(balance("A")).isEqualTo(900L);

        // finally: once the dead owner's lease has run out, recovery finishes it (rolled forward)
        mongo.expireLeases(mongo.database());
        assertThat(manager.recover(Duration.ZERO).rolledForward()).isEqualTo(1);
        assertThat(balance("A")).isEqualTo(900L);
        assertThat(balance("B")).isEqualTo(1100L);
    }

    @Test
    void cancel_appliedTransaction_isRefusedAndItIsRolledForward() {
        // given: the owner died right after the commit point
        TransactionManager owner = newManager("owner", Duration.ofMillis(100), crashOnceAt(CrashPoint.after(Step.COMMIT, -1)));
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).isInstanceOf(Crash.class);
        Object id = onlyTransactionId();

        // when
        CancelResult result = manager.cancel(id, "too late");

        // then
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.ROLLED_FORWARD);
        assertThat(result.state()).isEqualTo(TransactionState.APPLIED);
        assertThat(result.reason()).contains("applied").contains("commit point");
        assertThat(stored(id)).containsEntry("state", "applied");

        mongo.expireLeases(mongo.database());
        assertThat(manager.recover(Duration.ZERO).rolledForward()).isEqualTo(1);
        assertThat(balance("A")).isEqualTo(900L);
        assertThat(balance("B")).isEqualTo(1100L);
    }

    @Test
    void cancel_doneTransaction_isRefused() {
        TransactionOutcome done = bank.transfer("A", "B", 100L);

        CancelResult result = manager.cancel(done.id(), "too late");

        assertThat(result.kind()).isEqualTo(CancelResult.Kind.ROLLED_FORWARD);
        assertThat(result.state()).isEqualTo(TransactionState.DONE);
        assertThat(stored(done.id())).containsEntry("state", "done");
        assertThat(balance("A")).isEqualTo(900L);
    }

    @Test
    void cancel_unknownId_saysNotFound() {
        CancelResult result = manager.cancel("no-such-transaction", "x");

        assertThat(result.kind()).isEqualTo(CancelResult.Kind.NOT_FOUND);
        assertThat(result.reason()).contains("no transaction with id no-such-transaction");
    }

    @Test
    void cancel_alreadyCanceled_returnsTheFirstReason() {
        TransactionOutcome canceled = bank.transfer("A", "B", 5000L);

        CancelResult again = manager.cancel(canceled.id(), "second");

        assertThat(again.kind()).isEqualTo(CancelResult.Kind.ALREADY_CANCELED);
        assertThat(again.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(again.reason()).isEqualTo(canceled.reason());
        assertThat(again.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS).isEqualTo(canceled.reasonCode());
    }

    @Test
    void cancel_staleCancelingTransaction_finishesTheUndo() throws Exception {
        // given: an owner began canceling (the credit to RICH would overflow, refused after A was debited)
        // and died before undoing the debit
        bank.createAccount("RICH", Long.MAX_VALUE);
        mongo.invariants().expectTotal(mongo.database(), new java.math.BigDecimal(Long.MAX_VALUE).add(java.math.BigDecimal.valueOf(2000)));
        TransactionManager owner = newManager("owner", Duration.ofMillis(100), crashOnceAt(CrashPoint.after(Step.BEGIN_CANCEL, -1)));
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "RICH", 100L)).isInstanceOf(Crash.class);
        Object id = onlyTransactionId();
        assertThat(stored(id)).containsEntry("state", "canceling");
        assertThat(balance("A")).isEqualTo(900L);
        Thread.sleep(300);

        // when
        CancelResult result = newManager("operator", Duration.ofMillis(100), CrashHook.NONE).cancel(id, "operator");

        // then: canceled, with the reason the owner recorded
        assertThat(result.kind()).isEqualTo(CancelResult.Kind.CANCELED);
        assertThat(result.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(result.reason()).contains("guard");
        assertThat(result.reasonCode()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("RICH")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void cancel_whileOwnerDiesBeforeFirstApply_leavesNothingInEffect() throws Exception {
        AtomicReference<Object> seen = new AtomicReference<>();
        TransactionManager owner = newManager("owner", Duration.ofMillis(100), (point, id) -> {
            if (point.equals(CrashPoint.before(Step.APPLY, 0))) {
                seen.set(id);
                throw new Crash(point);
            }
        });
        assertThatThrownBy(() -> new Bank(owner).transfer("A", "B", 100L)).isInstanceOf(Crash.class);
        Thread.sleep(300);

        CancelResult result = newManager("operator", Duration.ofMillis(100), CrashHook.NONE).cancel(seen.get(), null);

        assertThat(result.kind()).isEqualTo(CancelResult.Kind.CANCELED);
        assertThat(result.reason()).isEqualTo("canceled by request");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(1000L);
    }

    // ---- participants a write cannot change ------------------------------------------------------

    @Test
    void transfer_toAccountWhoseBalanceIsNotANumber_isCanceledWithNothingInEffect() {
        // given: B's balance was overwritten with text by someone else
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", "1000")));
        mongo.invariants().expectTotal(mongo.database(), 1000L);

        // when
        TransactionOutcome outcome = bank.transfer("A", "B", 100L);

        // then: the credit's write error cancels the transfer; A's debit is undone
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("B");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(bank.accounts().find(new Document("_id", "B")).first().get("balance")).isEqualTo("1000");
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", 1000L)));
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    @Test
    void transferOfDecimalAmount_toAccountWhoseBalanceIsNotANumber_isCanceledWithNothingInEffect() {
        // given: B's balance is text; a decimal credit has no overflow guard, so the write itself fails
        bank.accounts().deleteOne(new Document("_id", "A"));
        bank.createAccount("A", 1000L, 2); // of scale 2, so that 100.50 is a valid amount
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", "1000")));
        mongo.invariants().expectTotal(mongo.database(), 1000L);

        // when
        TransactionOutcome outcome = bank.transfer("A", "B", Amounts.parse("100.50"));

        // then
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).contains("B");
        assertThat(io.mongo2pc.Numbers.exact((Number) bank.accounts().find(new Document("_id", "A")).first().get("balance"))).isEqualByComparingTo("1000");
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", 1000L)));
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    @Test
    void recover_oneTransactionThatCannotBeApplied_doesNotStopThePassForTheOthers() throws Exception {
        // given: two stale transfers; the first one's destination cannot be credited (a decimal credit
        // has no overflow guard, so the write itself fails on B's text balance)
        bank.createAccount("C", 1000L);
        for (String id : java.util.List.of("A", "B")) { // of scale 2, so that 100.50 is a valid amount
            bank.accounts().deleteOne(new Document("_id", id));
            bank.createAccount(id, 1000L, 2);
        }
        mongo.invariants().expectTotal(mongo.database(), 3000L);
        TransactionManager owner1 = newManager("owner", Duration.ofMillis(100), crashOnceAt(CrashPoint.after(Step.APPLY, 0)));
        assertThatThrownBy(() -> new Bank(owner1).transfer("A", "B", Amounts.parse("100.50"))).isInstanceOf(Crash.class);
        TransactionManager owner2 = newManager("owner", Duration.ofMillis(100), crashOnceAt(CrashPoint.after(Step.APPLY, 0)));
        assertThatThrownBy(() -> new Bank(owner2).transfer("C", "A", 100L)).isInstanceOf(Crash.class);
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", "1000")));
        Thread.sleep(200);

        // when
        io.mongo2pc.RecoveryReport report = newManager("recoverer", Duration.ofMillis(100), CrashHook.NONE).recover();

        // then: both handled in one pass: the poisoned one canceled (A refunded), the other rolled forward
        assertThat(report.rolledForward()).isEqualTo(1);
        assertThat(report.canceled()).isEqualTo(1);
        assertThat(io.mongo2pc.Numbers.exact((Number) bank.accounts().find(new Document("_id", "A")).first().get("balance"))).isEqualByComparingTo("1100");
        assertThat(balance("C")).isEqualTo(900L);
        bank.accounts().updateOne(new Document("_id", "B"), new Document("$set", new Document("balance", 1000L)));
    }
}
