package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Generic transactions across two separate servers (two targets): insert, update with operators,
 * replacement, delete and a guarded increment in one transaction, stopped at every crash point and
 * recovered by another instance; all of it in effect or none.
 */
class GenericTransactionTest {
    @RegisterExtension
    static EmbeddedMongo shop = EmbeddedMongo.inMemory();
    @RegisterExtension
    static EmbeddedMongo bank = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash(CrashPoint p) {
            super("crash at " + p, null, false, false);
        }
    }

    private int round;

    @Test
    void mixedTransactionOverTwoTargets_commits_andEveryEffectIsThere() {
        String[] dbs = fresh();
        TransactionOutcome outcome = manager(dbs, "app", CrashHook.NONE).run(payment(dbs, 30));
        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertAllOrNothing(dbs, true, "clean run");
    }

    @Test
    void mixedTransactionOverTwoTargets_guardFailsLast_cancelsAndRestoresEverything() {
        String[] dbs = fresh();
        TransactionOutcome outcome = manager(dbs, "app", CrashHook.NONE).run(payment(dbs, 5_000));
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reason()).isEqualTo("A has balance 100, the debit needs 5000");
        assertAllOrNothing(dbs, false, "insufficient funds");
    }

    @Test
    void mixedTransactionOverTwoTargets_crashAtEveryPoint_recoveredByAnotherInstance_isAtomic() {
        for (int amount : new int[]{30, 5_000}) {
            Set<CrashPoint> points = new LinkedHashSet<>();
            String[] probe = fresh();
            manager(probe, "probe", (p, id) -> points.add(p)).run(payment(probe, amount));
            assertThat(points).hasSizeGreaterThan(12);
            for (CrashPoint point : points) {
                String[] dbs = fresh();
                List<Object> ids = new ArrayList<>();
                CrashHook crash = (p, id) -> {
                    if (id != null && ids.isEmpty()) {
                        ids.add(id);
                    }
                    if (p.equals(point)) {
                        throw new Crash(p);
                    }
                };
                assertThatThrownBy(() -> manager(dbs, "owner", crash).run(payment(dbs, amount))).isInstanceOf(Crash.class);
                bank.expireLeases(dbs[1]);
                manager(dbs, "recoverer", CrashHook.NONE).recover(Duration.ZERO);
                Document tx = bank.client().getDatabase(dbs[1]).getCollection("transactions").find().first();
                boolean done = tx != null && "done".equals(tx.getString("state"));
                assertThat(tx == null || done || "canceled".equals(tx.getString("state"))).as(point + ": terminal " + tx).isTrue();
                assertThat(done && amount > 1_000).as(point + ": a payment over the balance never commits").isFalse();
                assertAllOrNothing(dbs, done, "amount " + amount + ", crash at " + point);
            }
        }
    }

    @Test
    void readCommitted_neverShowsWorkOfAnUncommittedOrCanceledTransaction() {
        String[] dbs = fresh();
        TransactionManager manager = manager(dbs, "app", CrashHook.NONE);
        DocumentRef order = new DocumentRef("shop", dbs[0], "orders", "o1");
        DocumentRef account = new DocumentRef(DocumentRef.DEFAULT_TARGET, dbs[1], "accounts", "A");
        DocumentRef payment = new DocumentRef("shop", dbs[0], "payments", "p1");
        DocumentRef cart = new DocumentRef("shop", dbs[0], "carts", "c9");
        List<String> seen = new ArrayList<>();
        CrashHook look = (p, id) -> {
            if (p.phase() == CrashPoint.Phase.AFTER && p.step() != CrashPoint.Step.INSERT) {
                Document committedOrder = manager.readCommitted(order).orElseThrow();
                Document committedAccount = manager.readCommitted(account).orElseThrow();
                boolean committed = p.step() == CrashPoint.Step.COMMIT || p.step() == CrashPoint.Step.RELEASE || p.step() == CrashPoint.Step.FINISH;
                seen.add(p + " order=" + committedOrder.get("state") + " balance=" + committedAccount.get("balance"));
                assertThat(committedOrder.get("state")).as("order at " + p).isEqualTo(committed ? "Paid" : "UnPaid");
                assertThat(committedAccount.get("balance")).as("balance at " + p).isEqualTo(committed ? 70L : 100L);
                assertThat(manager.readCommitted(payment).isPresent()).as("payment at " + p).isEqualTo(committed);
                assertThat(manager.readCommitted(cart).isPresent()).as("cart at " + p).isEqualTo(!committed);
                assertThat(committedOrder).doesNotContainKey("_m2pc");
            }
        };
        TransactionManager watched = manager(dbs, "watched", look);
        assertThat(watched.run(payment(dbs, 30)).state()).isEqualTo(TransactionState.DONE);
        assertThat(seen).hasSizeGreaterThan(8);

        // A canceled one: the reader never saw its work, before or after.
        seen.clear();
        CrashHook lookCanceled = (p, id) -> {
            if (p.phase() == CrashPoint.Phase.AFTER && p.step() != CrashPoint.Step.INSERT) {
                assertThat(manager.readCommitted(order).orElseThrow().get("state")).as("at " + p).isEqualTo("Paid");
                assertThat(manager.readCommitted(new DocumentRef("shop", dbs[0], "payments", "p2"))).as("at " + p).isEmpty();
                seen.add(p.toString());
            }
        };
        List<Operation> second = List.of(
                Operation.insert(new DocumentRef("shop", dbs[0], "payments", "p2"), new Document("order", "o1").append("amount", 10)),
                Operation.update(order, new Document("$set", new Document("state", "Refunded")), new Document("state", "Paid")),
                Operation.increment(account, "balance", -100_000L, new Document("balance", new Document("$gte", 100_000L))));
        assertThat(manager(dbs, "watched", lookCanceled).run(second).state()).isEqualTo(TransactionState.CANCELED);
        assertThat(seen).isNotEmpty();
        assertAllOrNothing(dbs, true, "after the canceled one");
    }

    @Test
    void readCommitted_documentInATransactionOfAnotherCoordinator_refusesInsteadOfShowingItsWork() {
        // Regression: a marker whose transaction is not in the reader's transactions collection was
        // read as committed, so another coordinator's uncommitted debit was shown.
        String[] dbs = fresh();
        DocumentRef account = new DocumentRef(DocumentRef.DEFAULT_TARGET, dbs[1], "accounts", "A");
        TransactionManager otherCoordinator = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", bank.client())
                .database(dbs[1] + "other").build();
        List<String> seen = new ArrayList<>();
        CrashHook look = (p, id) -> {
            if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 3))) {
                assertThatThrownBy(() -> otherCoordinator.readCommitted(account))
                        .isInstanceOf(TransactionException.class).hasMessageContaining(String.valueOf(id))
                        .hasMessageContaining(dbs[1] + "other.transactions");
                assertThatThrownBy(() -> otherCoordinator.readCommitted(List.of(account)))
                        .isInstanceOf(TransactionException.class);
                assertThat(manager(dbs, "same", CrashHook.NONE).readCommitted(account).orElseThrow().get("balance"))
                        .as("the transaction's own coordinator reads the balance before the debit").isEqualTo(100L);
                seen.add(p.toString());
            }
        };
        assertThat(manager(dbs, "app", look).run(payment(dbs, 30)).state()).isEqualTo(TransactionState.DONE);
        assertThat(seen).hasSize(1);
        assertThat(otherCoordinator.readCommitted(account).orElseThrow().get("balance")).as("once released").isEqualTo(70L);
    }

    @Test
    void exclusiveOperations_conflictWithAnotherTransaction_whichCancelsAfterTheConflictTimeout() {
        String[] dbs = fresh();
        DocumentRef order = new DocumentRef("shop", dbs[0], "orders", "o1");
        CrashHook holdOrder = (p, id) -> {
            if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 1))) {
                // While the first holds the order (operation 1), a second transaction wants it.
                TransactionManager second = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", bank.client()).target("shop", shop.client())
                        .database(dbs[1]).conflictTimeout(Duration.ofMillis(300)).build();
                TransactionOutcome outcome = second.run(List.of(Operation.update(order, new Document("$set", new Document("note", "x")), null)));
                assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
                assertThat(outcome.reason()).contains("conflict").contains("o1");
                TransactionOutcome inc = second.run(List.of(Operation.increment(order, "n", 1L, null)));
                assertThat(inc.state()).as("an increment waits for an exclusive holder too").isEqualTo(TransactionState.CANCELED);
            }
        };
        assertThat(manager(dbs, "first", holdOrder).run(payment(dbs, 30)).state()).isEqualTo(TransactionState.DONE);
        assertAllOrNothing(dbs, true, "after the conflict");
    }

    // ---- fixture: seed 000's payment, spread over two servers ----------------------------------

    /** Shop server: orders, payments, carts. Bank server: accounts and the transactions collection. */
    private String[] fresh() {
        round++;
        String shopDb = shop.database() + "_" + round + "_";
        String bankDb = bank.database() + "_" + round + "_";
        shop.client().getDatabase(shopDb).getCollection("orders").insertOne(new Document("_id", "o1").append("state", "UnPaid").append("total", 30));
        shop.client().getDatabase(shopDb).getCollection("carts").insertOne(new Document("_id", "c9").append("items", List.of("book")));
        bank.client().getDatabase(bankDb).getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()));
        return new String[]{shopDb, bankDb};
    }

    private static List<Operation> payment(String[] dbs, long amount) {
        return List.of(
                Operation.insert(new DocumentRef("shop", dbs[0], "payments", "p1"), new Document("order", "o1").append("amount", amount)),
                Operation.update(new DocumentRef("shop", dbs[0], "orders", "o1"), new Document("$set", new Document("state", "Paid")),
                        new Document("state", "UnPaid")),
                Operation.delete(new DocumentRef("shop", dbs[0], "carts", "c9"), null),
                Operation.increment(new DocumentRef(DocumentRef.DEFAULT_TARGET, dbs[1], "accounts", "A"), "balance", -amount,
                        new Document("balance", new Document("$gte", amount))));
    }

    private static TransactionManager manager(String[] dbs, String app, CrashHook hook) {
        return TestManagers.crashing(bank.client(), dbs[1], app, hook).twoRoundCommit(false).finishInBackground(false).target("shop", shop.client()).build();
    }

    private static void assertAllOrNothing(String[] dbs, boolean committed, String what) {
        MongoCollection<Document> orders = shop.client().getDatabase(dbs[0]).getCollection("orders");
        MongoCollection<Document> payments = shop.client().getDatabase(dbs[0]).getCollection("payments");
        MongoCollection<Document> carts = shop.client().getDatabase(dbs[0]).getCollection("carts");
        MongoCollection<Document> accounts = bank.client().getDatabase(dbs[1]).getCollection("accounts");
        Document order = orders.find(new Document("_id", "o1")).first();
        assertThat(order.getString("state")).as(what + ": order").isEqualTo(committed ? "Paid" : "UnPaid");
        assertThat(order).as(what + ": order keeps no lock").doesNotContainKey("_m2pc");
        assertThat(payments.countDocuments(new Document("_id", "p1"))).as(what + ": payment").isEqualTo(committed ? 1 : 0);
        assertThat(carts.countDocuments()).as(what + ": cart").isEqualTo(committed ? 0 : 1);
        assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).as(what + ": balance").isEqualTo(committed ? 70L : 100L);
        assertThat(new Invariants(shop.client(), dbs[0]).violations()).as(what).isEmpty();
        assertThat(new Invariants(bank.client(), dbs[1]).violations()).as(what).isEmpty();
    }
}
