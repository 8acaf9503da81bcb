package io.mongo2pc;

import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Decimal128 negative zero (the mongo shell writes one for {@code NumberDecimal("-0")}, and
 * {@link Decimal128#bigDecimalValue()} refuses it) is read as 0 wherever a stored number becomes
 * an exact decimal: {@link Numbers} and the committed read built on it.
 */
class NegativeZeroTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void numbers_negativeZeroDecimal128_isZero() {
        assertThat(Numbers.exact(Decimal128.NEGATIVE_ZERO)).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(Numbers.normalized(Decimal128.NEGATIVE_ZERO)).isInstanceOfSatisfying(BigDecimal.class,
                b -> assertThat(b).isEqualByComparingTo(BigDecimal.ZERO));
        assertThat(Numbers.isFinite(Decimal128.NEGATIVE_ZERO)).isTrue();
        assertThat(Numbers.negate(Decimal128.NEGATIVE_ZERO)).isInstanceOfSatisfying(Decimal128.class,
                d -> assertThat(Numbers.exact(d)).isEqualByComparingTo(BigDecimal.ZERO));
    }

    @Test
    void readCommitted_negativeZeroDecimalBalance_readsZero() {
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(
                new Document("_id", "Z").append("balance", Decimal128.NEGATIVE_ZERO).append("pendingTransactions", List.of()));
        try (TransactionManager tm = TestManagers.builder(mongo.client(), db, "negative-zero").build()) {
            Document read = tm.readCommitted(DocumentRef.of(db, "accounts", "Z")).orElseThrow();
            assertThat(read.get("balance")).isInstanceOfSatisfying(BigDecimal.class,
                    b -> assertThat(b).isEqualByComparingTo(BigDecimal.ZERO));
        }
    }
}
