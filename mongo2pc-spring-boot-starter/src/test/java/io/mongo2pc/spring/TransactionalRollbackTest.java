package io.mongo2pc.spring;

import io.mongo2pc.spring.TransactionalApp.Refusal;
import io.mongo2pc.spring.TransactionalApp.Wallet;
import io.mongo2pc.spring.TransactionalApp.Wallets;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Spring's rollback rules on {@code @Transactional} methods and {@code TransactionTemplate} callbacks run by mongo2pc. */
class TransactionalRollbackTest extends TransactionalTestBase {
    @Autowired Wallets wallets;
    @Autowired TransactionTemplate template;

    @Test
    void transactional_returns_commitsItsWrites() {
        Wallet alice = wallet("alice", 100);

        Wallet after = wallets.deposit(alice.id, 25);

        assertThat(after.balance).isEqualTo(125);
        assertThat(balance(alice)).isEqualTo(125);
    }

    @Test
    void transactional_runtimeException_cancelsAndIsRethrownAsThrown() {
        Wallet alice = wallet("alice", 100);

        assertThatThrownBy(() -> wallets.depositThenFail(alice.id, 25))
                .isExactlyInstanceOf(IllegalStateException.class).hasMessage("refused after the deposit");

        assertThat(balance(alice)).isEqualTo(100);
    }

    @Test
    void transactional_checkedException_commitsThenIsRethrown_asSpringsDefaultRule() {
        Wallet alice = wallet("alice", 100);

        assertThatThrownBy(() -> wallets.depositThenRefuse(alice.id, 25)).isExactlyInstanceOf(Refusal.class);

        assertThat(balance(alice)).isEqualTo(125);
    }

    @Test
    void transactional_checkedExceptionInRollbackFor_cancelsAndIsRethrown() {
        Wallet alice = wallet("alice", 100);

        assertThatThrownBy(() -> wallets.depositThenRefuseRollingBack(alice.id, 25)).isExactlyInstanceOf(Refusal.class);

        assertThat(balance(alice)).isEqualTo(100);
    }

    @Test
    void transactional_runtimeExceptionInNoRollbackFor_commitsThenIsRethrown() {
        Wallet alice = wallet("alice", 100);

        assertThatThrownBy(() -> wallets.depositThenFailCommitting(alice.id, 25))
                .isExactlyInstanceOf(IllegalArgumentException.class);

        assertThat(balance(alice)).isEqualTo(125);
    }

    @Test
    void transactional_setRollbackOnly_cancelsAndReturnsTheMethodsValue() {
        Wallet alice = wallet("alice", 100);

        String value = wallets.depositThenRollBack(alice.id, 25);

        assertThat(value).isEqualTo("rolled back on purpose");
        assertThat(balance(alice)).isEqualTo(100);
    }

    @Test
    void transactionTemplate_runsOnMongo2pc_commitsOrCancelsAsTheCallbackEnds() {
        Wallet alice = wallet("alice", 100);
        assertThat(template.getTransactionManager()).as("the application's only transaction manager")
                .isInstanceOf(Mongo2pcTransactionManager.class);

        Long committed = template.execute(status -> {
            Wallet w = ops.findById(alice.id, Wallet.class).orElseThrow();
            w.balance -= 40;
            return ops.save(w).balance;
        });
        String rolledBack = template.execute(status -> {
            Wallet w = ops.findById(alice.id, Wallet.class).orElseThrow();
            w.balance = 0;
            ops.save(w);
            status.setRollbackOnly();
            return "not kept";
        });
        assertThatThrownBy(() -> template.executeWithoutResult(status -> {
            wallets.deposit(alice.id, 1000);
            throw new IllegalStateException("the callback fails");
        })).isExactlyInstanceOf(IllegalStateException.class);

        assertThat(committed).isEqualTo(60);
        assertThat(rolledBack).isEqualTo("not kept");
        assertThat(balance(alice)).isEqualTo(60);
    }
}
