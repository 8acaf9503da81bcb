package io.mongo2pc.spring;

import io.mongo2pc.spring.TransactionalApp.Transfers;
import io.mongo2pc.spring.TransactionalApp.Wallet;
import io.mongo2pc.spring.TransactionalApp.Wallets;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.NestedTransactionNotSupportedException;
import org.springframework.transaction.TransactionUsageException;
import org.springframework.transaction.UnexpectedRollbackException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How {@code @Transactional} methods that call each other share, or do not share, a mongo2pc transaction. */
class TransactionalPropagationTest extends TransactionalTestBase {
    @Autowired Wallets wallets;
    @Autowired Transfers transfers;

    @Test
    void required_joinsTheCallersTransaction_bothWritesOrNeither() {
        Wallet alice = wallet("alice", 100);
        Wallet bob = wallet("bob", 0);

        transfers.transfer(alice.id, bob.id, 30);
        assertThatThrownBy(() -> transfers.transfer(alice.id, bob.id, 500)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("below zero");

        assertThat(balance(alice)).isEqualTo(70);
        assertThat(balance(bob)).as("the credit, made first, went with the refused debit").isEqualTo(30);
    }

    @Test
    void required_aJoinedMethodsWrites_areReadByTheCaller_beforeTheCommit() {
        Wallet alice = wallet("alice", 100);

        long readBack = transfers.depositAndReadBack(alice.id, 7);

        assertThat(readBack).isEqualTo(107);
        assertThat(balance(alice)).isEqualTo(107);
    }

    @Test
    void required_joinedMethodFails_callerCatchesIt_theWholeTransactionRollsBack() {
        Wallet alice = wallet("alice", 100);

        assertThatThrownBy(() -> transfers.catchJoinedFailure(alice.id)).isInstanceOf(UnexpectedRollbackException.class)
                .hasMessageContaining("a method that joined it failed or asked for rollback");

        assertThat(balance(alice)).as("neither the caller's deposit nor the joined one").isEqualTo(100);
    }

    @Test
    void requiresNew_commitsOnItsOwn_whenTheCallerThenFails() {
        Wallet first = wallet("first", 10);
        Wallet second = wallet("second", 10);

        assertThatThrownBy(() -> transfers.failAfterRequiresNew(first.id, second.id))
                .isInstanceOf(IllegalStateException.class);

        assertThat(balance(first)).as("the caller's write, rolled back").isEqualTo(10);
        assertThat(balance(second)).as("the REQUIRES_NEW method's write, committed").isEqualTo(11);
    }

    @Test
    void mandatory_joinsTheCallers_andIsRefusedWithoutOne() {
        Wallet alice = wallet("alice", 100);

        transfers.withMandatory(alice.id, 3);
        assertThatThrownBy(() -> wallets.depositInCallersTransaction(alice.id, 3))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("needs a mongo2pc transaction (PROPAGATION_MANDATORY)");

        assertThat(balance(alice)).isEqualTo(103);
    }

    @Test
    void never_runsOutsideATransaction_andIsRefusedInOne() {
        Wallet alice = wallet("alice", 100);

        assertThat(wallets.readOutside(alice.id)).get().extracting(w -> w.balance).isEqualTo(100L);
        assertThatThrownBy(() -> transfers.callNever(alice.id)).isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("must run outside a transaction (PROPAGATION_NEVER)");
    }

    @Test
    void supportsNotSupportedAndNested_areRefusedAtTheCall_beforeTheMethodRuns() {
        Wallet alice = wallet("alice", 100);
        int runsBefore = wallets.refusedRuns();

        assertThatThrownBy(() -> wallets.supports(alice.id)).isInstanceOf(TransactionUsageException.class)
                .hasMessageContaining("PROPAGATION_SUPPORTS, which mongo2pc does not support: use REQUIRED, REQUIRES_NEW,"
                        + " MANDATORY or NEVER");
        assertThatThrownBy(() -> wallets.notSupported(alice.id)).isInstanceOf(TransactionUsageException.class)
                .hasMessageContaining("PROPAGATION_NOT_SUPPORTED");
        assertThatThrownBy(() -> wallets.nested(alice.id)).isInstanceOf(NestedTransactionNotSupportedException.class)
                .hasMessageContaining("PROPAGATION_NESTED");

        assertThat(wallets.refusedRuns()).isEqualTo(runsBefore);
        assertThat(balance(alice)).isEqualTo(100);
    }
}
