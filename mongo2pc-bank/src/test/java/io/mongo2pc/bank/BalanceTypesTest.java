package io.mongo2pc.bank;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Balances read back come as one type per account scale: {@code Long} for whole units (never an
 * {@code Integer} one time and a {@code Long} the next), {@code BigDecimal} for Decimal128 ones.
 * Regression (found by an independent check): an account written by the mongo shell ({@code int32})
 * read as Integer until its first transfer, and readCommitted gave an Integer or a Long depending on
 * whether an uncommitted increment was taken back.
 */
class BalanceTypesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager manager;
    Bank bank;
    String db;

    @BeforeEach
    void setUp() {
        db = mongo.database();
        manager = Bank.configure(TransactionManager.builder().target("default", mongo.client()).database(db)).build();
        bank = new Bank(manager);
        // as the mongo shell writes them: 100 is an int32
        bank.accounts().insertMany(List.of(
                new Document("_id", "I").append("balance", 100).append("pendingTransactions", List.of()),
                new Document("_id", "D").append("balance", new Decimal128(new BigDecimal("12.50"))).append("pendingTransactions", List.of())));
        mongo.invariants().expectTotal(db, new BigDecimal("112.50"));
    }

    @Test
    void bankList_int32Balance_isALong_andDecimal128Balance_isABigDecimal() {
        assertThat(bank.list()).extracting(Bank.Account::balance).containsExactly(new BigDecimal("12.50"), 100L);
    }

    @Test
    void readCommitted_int32Balance_isALongWhetherOrNotAnIncrementWasTakenBack() {
        DocumentRef account = DocumentRef.of(db, "accounts", "I");
        assertThat(manager.readCommitted(account).orElseThrow().get("balance")).isEqualTo(100L);

        AtomicBoolean stop = new AtomicBoolean(true);
        TransactionManager stopped = Bank.configure(TransactionManager.builder().target("default", mongo.client()).database(db)
                .application("stopped").commitInsert(false).crashHook((p, id) -> { // a pending document: recovery rolls it forward
                    if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && stop.getAndSet(false)) {
                        throw new IllegalStateException("stop after the debit");
                    }
                })).build();
        assertThatThrownBy(() -> new Bank(stopped).transfer("I", "D", 5L)).isInstanceOf(IllegalStateException.class);

        assertThat(manager.readCommitted(account).orElseThrow().get("balance")).as("the debit taken back").isEqualTo(100L);
        assertThat(manager.readCommitted(List.of(account)).get(0).orElseThrow().get("balance")).isEqualTo(100L);
        assertThat(manager.readCommitted(DocumentRef.of(db, "accounts", "D")).orElseThrow().get("balance"))
                .isEqualTo(new BigDecimal("12.50"));
        mongo.expireLeases(db);
        manager.recover(Duration.ZERO);
        assertThat(manager.readCommitted(account).orElseThrow().get("balance")).isEqualTo(95L);
    }

    @Test
    void invariants_negativeZeroDecimalBalance_isZero() {
        // Regression: the invariant check threw on a Decimal128 negative zero (bigDecimalValue() refuses it).
        bank.accounts().insertOne(new Document("_id", "Z").append("balance", Decimal128.parse("-0"))
                .append("pendingTransactions", List.of()));

        assertThat(new Invariants(mongo.client(), db).expectTotal(db, new BigDecimal("112.50")).violations()).isEmpty();
        assertThat(bank.verify(new BigDecimal("112.50")).ok()).isTrue();
    }
}
