package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An increment whose amount would change the number type or the scale of the stored field is bad
 * input, refused before anything is written, unless the operation is flagged
 * {@link Operation.Flag#ALLOW_TYPE_CHANGE}; an amount of the field's own kind is fine.
 */
class NumberTypesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    TransactionManager tm;
    DocumentRef widget;

    @BeforeEach
    void setUp() {
        tm = TestManagers.builder(mongo.client(), mongo.database(), "numbers").finishInBackground(false).build();
        widget = DocumentRef.of(mongo.database(), "stock", "widget");
        stock().insertOne(new Document("_id", "widget").append("qty", 5).append("weight", 2.5)
                .append("price", new Decimal128(new BigDecimal("10.00"))));
    }

    private MongoCollection<Document> stock() {
        return mongo.client().getDatabase(mongo.database()).getCollection("stock");
    }

    private long transactions() {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments();
    }

    private static Decimal128 decimal(String text) {
        return new Decimal128(new BigDecimal(text));
    }

    @Test
    void increment_ofADouble_onAnInteger_isRefusedBeforeAnythingIsWritten() {
        Operation inc = Operation.increment(widget, "qty", 1.5, null);

        assertThatThrownBy(() -> tm.run(List.of(inc))).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("operation 0 on " + widget + ": an increment of qty by 1.5 would turn the integer 5 into a double");
        assertThatThrownBy(() -> tm.submit(List.of(inc))).isInstanceOf(InvalidTransactionException.class);
        assertThatThrownBy(() -> tm.run(List.of(Operation.update(widget, new Document("$inc", new Document("qty", decimal("1"))), null))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("would turn the integer 5 into a decimal");

        assertThat(stock().find().first()).containsEntry("qty", 5);
        assertThat(transactions()).isZero();
    }

    @Test
    void increment_ofMoreDecimalPlacesThanTheField_isRefused_ofFewerOrOfAnInteger_isApplied() {
        assertThatThrownBy(() -> tm.run(List.of(Operation.increment(widget, "price", decimal("0.001"), null))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("10.00 (2 decimal places) 3 places");
        assertThatThrownBy(() -> tm.run(List.of(Operation.increment(widget, "price", 0.5, null))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("add a double to the decimal 10.00");
        assertThatThrownBy(() -> tm.run(List.of(Operation.increment(widget, "weight", decimal("0.5"), null))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("turn the double 2.5 into a decimal");

        TransactionOutcome fine = tm.run(List.of(new Operation.Increment(widget, new Document("price", decimal("0.5"))
                .append("qty", 2L).append("weight", 0.25), null)));

        assertThat(fine.isCommitted()).as(fine.reason()).isTrue();
        assertThat(stock().find().first()).containsEntry("price", decimal("10.50")).containsEntry("qty", 7L)
                .containsEntry("weight", 2.75);
    }

    @Test
    void increment_flaggedAllowTypeChange_changesTheType() {
        TransactionOutcome outcome = tm.run(List.of(Operation.increment(widget, "qty", 1.5, null)
                .with(Operation.Flag.ALLOW_TYPE_CHANGE)));

        assertThat(outcome.isCommitted()).as(outcome.reason()).isTrue();
        assertThat(stock().find().first()).containsEntry("qty", 6.5);
    }

    @Test
    void queuedIncrement_whoseFieldChangedTypeBeforeItsClaim_isCanceledWithTheReason() {
        Object id = tm.submit(List.of(Operation.increment(widget, "weight", 0.5, null)));
        stock().updateOne(new Document("_id", "widget"), new Document("$set", new Document("weight", 3)));

        TransactionOutcome outcome = tm.claimAndRun().orElseThrow();

        assertThat(outcome.id()).isEqualTo(id);
        assertThat(outcome.isCanceled()).isTrue();
        assertThat(outcome.reason()).contains("would turn the integer 3 into a double");
        assertThat(stock().find().first()).containsEntry("weight", 3);
    }
}
