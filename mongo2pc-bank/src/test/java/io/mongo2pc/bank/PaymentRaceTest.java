package io.mongo2pc.bank;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many payers race to pay the same order, each under its own payment id, from an account that
 * holds enough for one payment: in every round exactly one pays, the order ends Paid, and every
 * other payer is canceled because the order is paid (its guard fails on the committed order, or the
 * payment's document exists), never because of another payer's hold that was not committed.
 */
@Tag("slow")
class PaymentRaceTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ROUNDS = 50;
    private static final long TOTAL = 30L;

    private final List<TransactionManager> managers = new ArrayList<>();
    private Bank bank;
    private Payments[] payments;

    @BeforeEach
    void setUp() {
        // two managers, as two processes of an application: each payer uses one of them
        for (int m = 0; m < 2; m++) {
            managers.add(Bank.configure(TransactionManager.builder().target("default", mongo.client())
                    .database(mongo.database()).application("payer-" + m)).build());
        }
        bank = new Bank(managers.get(0));
        payments = managers.stream().map(Payments::new).toArray(Payments[]::new);
    }

    @AfterEach
    void closeManagers() {
        managers.forEach(TransactionManager::close);
    }

    @ParameterizedTest(name = "{0} payers")
    @ValueSource(ints = {8, 32})
    void pay_manyPayersRaceForOneOrder_exactlyOnePaysEveryRound_theOthersCanceledAsAlreadyPaid(int payers) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(payers);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                // given an unpaid order, and an account with enough for one payment of it
                String order = "o" + round;
                String account = "buyer" + round;
                String merchant = "shop" + round;
                bank.createAccount(account, TOTAL);
                bank.createAccount(merchant, 0L);
                payments[0].createOrder(order, TOTAL);

                // when every payer pays it at once, each under its own payment id
                CyclicBarrier start = new CyclicBarrier(payers);
                List<Future<TransactionOutcome>> futures = new ArrayList<>();
                for (int p = 0; p < payers; p++) {
                    Payments payer = payments[p % payments.length];
                    String paymentId = "payment-" + round + "-" + p;
                    futures.add(pool.submit(() -> {
                        start.await();
                        return payer.pay(paymentId, order, account, merchant);
                    }));
                }
                List<TransactionOutcome> outcomes = new ArrayList<>();
                for (Future<TransactionOutcome> f : futures) {
                    outcomes.add(f.get(2, TimeUnit.MINUTES));
                }

                // then exactly one paid, the order is paid, the money moved once
                List<TransactionOutcome> paid = outcomes.stream().filter(TransactionOutcome::isCommitted).toList();
                assertThat(paid).as("round %d: payers that paid; outcomes %s", round, outcomes).hasSize(1);
                assertThat(committedOrderState(order)).as("round %d: the order", round).isEqualTo("Paid");
                assertThat(committedBalance(account)).as("round %d: the buyer", round).isEqualTo(0L);
                assertThat(committedBalance(merchant)).as("round %d: the merchant", round).isEqualTo(TOTAL);
                // and every other payer was canceled because the order is paid
                for (TransactionOutcome lost : outcomes) {
                    if (lost.isCommitted()) {
                        continue;
                    }
                    assertThat(lost.reasonCode()).as("round %d: %s", round, lost)
                            .isIn(ReasonCode.GUARD_FAILED, ReasonCode.DOCUMENT_EXISTS);
                    assertThat(lost.reason()).as("round %d: %s", round, lost).containsAnyOf("." + Payments.ORDERS + "/" + order, "/pay-" + order);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        managers.forEach(m -> assertThat(m.awaitFinished(Duration.ofSeconds(30))).isTrue());
        mongo.invariants().expectTotal(mongo.database(), (long) ROUNDS * TOTAL);
    }

    private String committedOrderState(String order) {
        return managers.get(0).readCommitted(DocumentRef.of(mongo.database(), Payments.ORDERS, order))
                .orElseThrow().getString("state");
    }

    private Object committedBalance(String account) {
        Document doc = managers.get(0).readCommitted(DocumentRef.of(mongo.database(), Bank.ACCOUNTS, account)).orElseThrow();
        return doc.get("balance");
    }
}
