package io.mongo2pc.interactive;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An interactive transaction's body as a program sees it: reads of committed state, its own writes
 * read back, several writes to one document as one operation, a body's exception, bad input, the
 * read-only path, a caller's id run twice.
 */
class InteractiveBasicsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionManager tm;
    private MongoCollection<Document> orders;

    private static DocumentRef ref(String collection, String id) {
        return DocumentRef.of(mongo.database(), collection, id);
    }

    @BeforeEach
    void setUp() {
        tm = TestManagers.builder(mongo.client(), mongo.database(), "interactive").build();
        orders = mongo.client().getDatabase(mongo.database()).getCollection("orders");
        orders.insertOne(new Document("_id", "o1").append("status", "NEW").append("lines", List.of(
                new Document("item", "i1").append("qty", 2L), new Document("item", "i1").append("qty", 1L))));
        mongo.client().getDatabase(mongo.database()).getCollection("items").insertOne(new Document("_id", "i1").append("stock", 5L));
        mongo.client().getDatabase(mongo.database()).getCollection("carts").insertOne(new Document("_id", "c1").append("for", "o1"));
    }

    @AfterEach
    void close() {
        tm.close();
    }

    private Document stored(String collection, String id) {
        Document doc = mongo.client().getDatabase(mongo.database()).getCollection(collection).find(new Document("_id", id)).first();
        if (doc != null) {
            doc.remove(LibraryFields.VERSION);
        }
        return doc;
    }

    private long transactionDocuments() {
        return mongo.transactions(mongo.database()).countDocuments();
    }

    @Test
    void order_paidWithItsLinesTakenFromStock_commitsAsOne() {
        DocumentRef order = ref("orders", "o1");
        DocumentRef item = ref("items", "i1");

        TransactionResult<String> result = tm.transact(ctx -> {
            Document o = ctx.get(order).orElseThrow();
            if (!"NEW".equals(o.getString("status"))) {
                return "skipped";
            }
            ctx.update(order, new Document("$set", new Document("status", "PAID")));
            for (Document line : o.getList("lines", Document.class)) {
                long stock = ctx.get(item).orElseThrow().getLong("stock");
                ctx.update(item, new Document("$set", new Document("stock", Math.max(0, stock - line.getLong("qty")))));
            }
            ctx.insert(ref("shipments", "s1"), new Document("order", "o1"));
            ctx.delete(ref("carts", "c1"));
            return "paid";
        });

        assertThat(result.value()).isEqualTo("paid");
        assertThat(result.outcome().isCommitted()).isTrue();
        assertThat(result.attempts()).isEqualTo(1);
        tm.close();
        assertThat(stored("orders", "o1").getString("status")).isEqualTo("PAID");
        assertThat(stored("items", "i1").getLong("stock")).as("both lines of one item, one write").isEqualTo(2L);
        assertThat(stored("shipments", "s1")).isEqualTo(new Document("_id", "s1").append("order", "o1"));
        assertThat(stored("carts", "c1")).isNull();
        Document tx = mongo.transactions(mongo.database()).find().first();
        assertThat(tx.getList("ops", Document.class)).as("one operation per document written").hasSize(4);
        assertThat(tx.getString("state")).isEqualTo("done");
    }

    @Test
    void readYourWrites_updateInsertAndDelete_areSeenByLaterReadsOfTheBody() {
        DocumentRef order = ref("orders", "o1");
        DocumentRef fresh = ref("orders", "o2");

        TransactionResult<List<Object>> result = tm.transact(ctx -> {
            ctx.update(order, new Document("$inc", new Document("seen", 1L)).append("$push", new Document("log", "a")));
            ctx.update(order, new Document("$inc", new Document("seen", 1L)).append("$push", new Document("log", "b")));
            Document afterUpdates = ctx.get(order).orElseThrow();
            boolean inserted = ctx.insert(fresh, new Document("status", "NEW"));
            boolean insertedAgain = ctx.insert(fresh, new Document("status", "OTHER"));
            Optional<Document> afterInsert = ctx.get(fresh);
            ctx.delete(order);
            Optional<Document> afterDelete = ctx.get(order);
            boolean updatedAfterDelete = ctx.update(order, new Document("$set", new Document("status", "X")));
            return List.of(afterUpdates.getLong("seen"), afterUpdates.getList("log", String.class), inserted, insertedAgain,
                    afterInsert.orElseThrow().getString("status"), afterDelete.isPresent(), updatedAfterDelete);
        });

        assertThat(result.value()).containsExactly(2L, List.of("a", "b"), true, false, "NEW", false, false);
        tm.close();
        assertThat(stored("orders", "o1")).isNull();
        assertThat(stored("orders", "o2")).isEqualTo(new Document("_id", "o2").append("status", "NEW"));
    }

    @Test
    void getAll_readsSeveralDocumentsTogether_withTheBodysOwnWritesApplied() {
        DocumentRef order = ref("orders", "o1");
        DocumentRef item = ref("items", "i1");
        DocumentRef missing = ref("items", "none");

        TransactionResult<List<Object>> result = tm.transact(ctx -> {
            ctx.update(item, new Document("$inc", new Document("stock", -1L)));
            List<Optional<Document>> all = ctx.getAll(List.of(order, item, missing, order));
            return List.of(all.get(0).orElseThrow().getString("status"), all.get(1).orElseThrow().getLong("stock"),
                    all.get(2).isPresent(), all.get(3).orElseThrow().getString("status"));
        });

        assertThat(result.value()).containsExactly("NEW", 4L, false, "NEW");
    }

    @Test
    void bodyThrowsACheckedException_nothingIsWritten_andTheCallerGetsItAsThrown() {
        IOException thrown = new IOException("the printer is on fire");
        DocumentRef order = ref("orders", "o1");

        assertThatThrownBy(() -> tm.transact(ctx -> {
            ctx.update(order, new Document("$set", new Document("status", "PAID")));
            ctx.insert(ref("shipments", "s1"), new Document("order", "o1"));
            throw thrown;
        })).isSameAs(thrown);

        assertThat(stored("orders", "o1").getString("status")).isEqualTo("NEW");
        assertThat(stored("shipments", "s1")).isNull();
        assertThat(transactionDocuments()).isZero();
    }

    @Test
    void badInput_isRefusedWithAClearMessage_andNothingIsWritten() {
        DocumentRef order = ref("orders", "o1");

        assertThatThrownBy(() -> tm.transact(ctx -> ctx.update(order, new Document("$set", new Document("pendingTransactions", 1)))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> tm.transact(ctx -> ctx.get(new DocumentRef("nowhere", "db", "c", "x"))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("unknown target 'nowhere'");
        assertThatThrownBy(() -> tm.transact(ctx -> ctx.update(order, new Document("$currentDate", new Document("at", true)))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("$currentDate");
        assertThatThrownBy(() -> tm.transact(ctx -> ctx.update(order, new Document("$inc", new Document("status", 1L)))))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("non-numeric");

        assertThat(stored("orders", "o1").getString("status")).isEqualTo("NEW");
        assertThat(transactionDocuments()).isZero();
    }

    @Test
    void readOnlyBody_returnsWhatItRead_withoutATransactionDocument() {
        TransactionResult<Long> result = tm.transact(ctx -> ctx.get(ref("items", "i1")).orElseThrow().getLong("stock"));

        assertThat(result.value()).isEqualTo(5L);
        assertThat(result.outcome().state()).isEqualTo(TransactionState.DONE);
        assertThat(transactionDocuments()).isZero();
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("items").find().first()).doesNotContainKey("_m2pc");
    }

    @Test
    void callersIdRunTwiceAtOnce_appliesOnce_andBothReturnTheWinnersResult() throws Exception {
        DocumentRef item = ref("items", "i1");
        TransactionOptions options = TransactionOptions.builder().id("at-once").build();
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        List<java.util.concurrent.Future<TransactionResult<Long>>> runs = new java.util.ArrayList<>();
        for (int r = 0; r < 2; r++) {
            TransactionManager manager = TestManagers.builder(mongo.newClient(), mongo.database(), "run-" + r).build();
            long mine = r;
            runs.add(pool.submit(() -> manager.transact(options, ctx -> {
                long stock = ctx.get(item).orElseThrow().getLong("stock");
                if (ctx.attempt() == 1) {
                    together.await(5, java.util.concurrent.TimeUnit.SECONDS); // both read before either commits
                }
                ctx.update(item, new Document("$set", new Document("stock", stock - 1)).append("$push", new Document("by", mine)));
                return mine;
            })));
        }
        TransactionResult<Long> first = runs.get(0).get();
        TransactionResult<Long> second = runs.get(1).get();
        pool.shutdown();

        assertThat(first.value()).as("both runs of one id return one result").isEqualTo(second.value());
        tm.close();
        assertThat(stored("items", "i1").getLong("stock")).as("applied once").isEqualTo(4L);
        assertThat(stored("items", "i1").getList("by", Long.class)).containsExactly(first.value());
    }

    @Test
    void callersIdRunTwice_secondRunReturnsTheFirstRunsResult_withoutRunningTheBody() {
        DocumentRef item = ref("items", "i1");
        AtomicInteger runs = new AtomicInteger();
        TransactionOptions options = TransactionOptions.builder().id("take-one").build();

        TransactionResult<Long> first = tm.transact(options, ctx -> {
            runs.incrementAndGet();
            long stock = ctx.get(item).orElseThrow().getLong("stock");
            ctx.update(item, new Document("$set", new Document("stock", stock - 1)));
            return stock - 1;
        });
        TransactionResult<Long> second = tm.transact(options, ctx -> {
            runs.incrementAndGet();
            ctx.update(item, new Document("$inc", new Document("stock", -1L)));
            return -1L;
        });

        assertThat(first.value()).isEqualTo(4L);
        assertThat(second.value()).isEqualTo(4L);
        assertThat(second.outcome().isCommitted()).isTrue();
        assertThat(runs).hasValue(1);
        tm.close();
        assertThat(stored("items", "i1").getLong("stock")).isEqualTo(4L);
    }
}
