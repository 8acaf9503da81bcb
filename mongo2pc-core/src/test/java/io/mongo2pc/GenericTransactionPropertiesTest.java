package io.mongo2pc;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.embedded.EmbeddedServer;
import io.mongo2pc.testkit.Invariants;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.bson.Document;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guarantee 1 over generic transactions, as a property: random transactions of inserts, updates,
 * deletes and increments with random guards, each owner killed at a random point of its run and
 * its transaction recovered by a second manager, run one after another. After each, the
 * documents equal a model that runs exactly the transactions whose preconditions hold (the
 * committed ones, in commit order), and nothing is left locked or marked.
 */
class GenericTransactionPropertiesTest {
    private static final List<String> IDS = List.of("d0", "d1", "d2", "d3");
    private static final AtomicInteger TRIES = new AtomicInteger();

    private static EmbeddedServer server;
    private static MongoClient client;
    private static MongoClient recoveryClient;

    @BeforeContainer
    static void start() {
        server = EmbeddedServer.inMemory().start();
        client = MongoClients.create(new ConnectionString(server.uri()));
        recoveryClient = MongoClients.create(new ConnectionString(server.uri()));
    }

    @AfterContainer
    static void stop() {
        client.close();
        recoveryClient.close();
        server.close();
    }

    /** One operation of the test, before it is bound to a database. */
    record Op(String kind, String id, long amount, String tag, boolean guarded) { }

    /** A transaction: its operations (on distinct documents) and where its owner dies (-1: it does not). */
    record Tx(List<Op> ops, int crashAt) { }

    @Provide
    Arbitrary<List<Tx>> transactions() {
        Arbitrary<Op> op = Combinators.combine(
                Arbitraries.of("inc", "update", "delete", "insert"), Arbitraries.of(IDS),
                Arbitraries.longs().between(-12, 12).filter(n -> n != 0), Arbitraries.of("red", "blue"),
                Arbitraries.of(true, false)).as(Op::new);
        Arbitrary<List<Op>> ops = op.list().ofMinSize(1).ofMaxSize(3).uniqueElements(Op::id);
        return Combinators.combine(ops, Arbitraries.integers().between(-1, 25)).as(Tx::new).list().ofMinSize(1).ofMaxSize(8);
    }

    @Property(tries = 25)
    void randomTransactionsWithCrashes_endAsTheModelSays(@ForAll("transactions") List<Tx> txs) {
        String db = "gprop" + TRIES.incrementAndGet();
        MongoCollection<Document> docs = client.getDatabase(db).getCollection("docs");
        Map<String, Document> model = new TreeMap<>();
        for (String id : List.of("d0", "d1")) {
            docs.insertOne(new Document("_id", id).append("n", 10L).append("tag", "red"));
            model.put(id, new Document("n", 10L).append("tag", "red"));
        }
        TransactionManager recoverer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", recoveryClient).database(db)
                .application("recoverer").build();
        try {
            for (Tx tx : txs) {
                List<Operation> ops = bind(db, tx.ops());
                AtomicInteger reached = new AtomicInteger();
                AtomicReference<Object> txId = new AtomicReference<>();
                AtomicBoolean crashed = new AtomicBoolean();
                TransactionManager owner = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", client).database(db).application("owner")
                        .crashHook((point, id) -> {
                            if (id != null) {
                                txId.compareAndSet(null, id);
                            }
                            if (reached.getAndIncrement() == tx.crashAt()) {
                                crashed.set(true);
                                throw new IllegalStateException("killed at " + point);
                            }
                        }).build();
                try {
                    owner.run(ops);
                } catch (IllegalStateException killed) {
                    assertThat(crashed).isTrue();
                }
                boolean written = txId.get() != null && recoverer.inspect(txId.get()).isPresent();
                if (crashed.get()) {
                    io.mongo2pc.testkit.EmbeddedMongo.expireLeases(client, db);
                    recoverer.recover(Duration.ZERO);
                }
                if (written) {
                    Document stored = recoverer.inspect(txId.get()).orElseThrow().document();
                    boolean holds = preconditionsHold(model, tx.ops());
                    assertThat(stored.getString("state")).as("%s: %s", tx, stored.toJson()).isEqualTo(holds ? "done" : "canceled");
                    if (holds) {
                        applyToModel(model, tx.ops());
                    }
                }
                assertThat(actual(docs)).as("after %s", tx).isEqualTo(model);
            }
            assertThat(new Invariants(client, db).violations()).isEmpty();
        } finally {
            client.getDatabase(db).drop();
        }
    }

    private static List<Operation> bind(String db, List<Op> ops) {
        List<Operation> bound = new ArrayList<>();
        for (Op op : ops) {
            DocumentRef ref = DocumentRef.of(db, "docs", op.id());
            bound.add(switch (op.kind()) {
                case "inc" -> Operation.increment(ref, "n", op.amount(),
                        op.guarded() && op.amount() < 0 ? new Document("n", new Document("$gte", -op.amount())) : null);
                case "update" -> Operation.update(ref, new Document("$set", new Document("tag", op.tag())),
                        op.guarded() ? new Document("tag", op.tag().equals("red") ? "blue" : "red") : null);
                case "delete" -> Operation.delete(ref, op.guarded() ? new Document("n", new Document("$gte", 10L)) : null);
                default -> Operation.insert(ref, new Document("n", op.amount() < 0 ? -op.amount() : op.amount()).append("tag", op.tag()));
            });
        }
        return bound;
    }

    /** True if every operation would be applied: documents exist (or not, for an insert) and guards hold. */
    private static boolean preconditionsHold(Map<String, Document> model, List<Op> ops) {
        for (Op op : ops) {
            Document doc = model.get(op.id());
            boolean ok = switch (op.kind()) {
                case "insert" -> doc == null;
                case "inc" -> doc != null && (!op.guarded() || op.amount() > 0 || doc.getLong("n") >= -op.amount());
                case "update" -> doc != null && (!op.guarded() || doc.getString("tag").equals(op.tag().equals("red") ? "blue" : "red"));
                default -> doc != null && (!op.guarded() || doc.getLong("n") >= 10L);
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static void applyToModel(Map<String, Document> model, List<Op> ops) {
        for (Op op : ops) {
            switch (op.kind()) {
                case "insert" -> model.put(op.id(), new Document("n", Math.abs(op.amount())).append("tag", op.tag()));
                case "inc" -> model.get(op.id()).put("n", model.get(op.id()).getLong("n") + op.amount());
                case "update" -> model.get(op.id()).put("tag", op.tag());
                default -> model.remove(op.id());
            }
        }
    }

    private static Map<String, Document> actual(MongoCollection<Document> docs) {
        Map<String, Document> actual = new TreeMap<>();
        Set<String> keys = new LinkedHashSet<>(List.of("n", "tag"));
        for (Document doc : docs.find()) {
            assertThat(doc).as("no lock left").doesNotContainKey("_m2pc");
            assertThat(doc.getList("pendingTransactions", Object.class, List.of())).as("no marker left").isEmpty();
            Document view = new Document();
            keys.forEach(k -> view.put(k, doc.get(k)));
            actual.put(doc.getString("_id"), view);
        }
        return actual;
    }
}
