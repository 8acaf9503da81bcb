package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two-round commit end to end: round 1 (insert and every prepare at once), the commit, the
 * release; a refusal canceled and undone; what a document shows in between (holds now, credits
 * only after the commit point). Inserts, updates, deletes and queued transactions: TwoRoundExclusiveTest.
 */
class TwoRoundCommitTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    private TransactionManager manager(boolean background, CrashHook hook) {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("two-round").twoRoundCommit(true).finishInBackground(background).crashHook(hook).build();
    }

    private void accounts(long balanceA, long balanceB) {
        TwoAccounts two = TwoAccounts.create(mongo, balanceA, balanceB);
        accounts = two.collection();
        a = two.a();
        b = two.b();
        mongo.invariants().expectTotal(mongo.database(), balanceA + balanceB);
    }

    private List<Operation> transfer(long value) {
        return List.of(Operation.increment(a, "balance", -value, new Document("balance", new Document("$gte", value))),
                Operation.increment(b, "balance", value, null));
    }

    private Document stored(String id) {
        return accounts.find(new Document("_id", id)).first();
    }

    private static boolean hasEntry(Document doc) {
        return doc.keySet().stream().anyMatch(k -> LibraryFields.entry(k));
    }

    @Test
    void transfer_commitsReleasesAndLeavesNoTrace() {
        accounts(100, 0);
        TransactionOutcome outcome = manager(false, CrashHook.NONE).run(transfer(30));
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(stored("A").getLong("balance")).isEqualTo(70L);
        assertThat(stored("B").getLong("balance")).isEqualTo(30L);
        for (String id : List.of("A", "B")) {
            assertThat(stored(id).getList("pendingTransactions", Object.class)).isEmpty();
            assertThat(hasEntry(stored(id))).as("entry left on " + id).isFalse();
        }
        Document tx = mongo.client().getDatabase(mongo.database()).getCollection("transactions")
                .find(new Document("_id", outcome.id())).first();
        assertThat(tx.get("protocol")).isEqualTo(2);
        assertThat(tx.getString("nonce")).isNotBlank();
        assertThat(tx.getDate("insertedAt")).isBefore(tx.getDate("until"));
    }

    @Test
    void beforeTheCommitPoint_theDebitIsHeldAndTheCreditOnlyMarked() {
        accounts(100, 0);
        List<Document> seen = new ArrayList<>();
        CrashHook look = (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                seen.add(stored("A"));
                seen.add(stored("B"));
            }
        };
        assertThat(manager(false, look).run(transfer(30)).state()).isEqualTo(TransactionState.DONE);
        assertThat(seen).hasSize(2);
        assertThat(seen.get(0).getLong("balance")).as("the debit is held at the prepare").isEqualTo(70L);
        assertThat(seen.get(1).getLong("balance")).as("the credit waits for the release").isEqualTo(0L);
        assertThat(seen.get(1).getList("pendingTransactions", Object.class)).as("the credit's mark").hasSize(1);
        assertThat(hasEntry(seen.get(1))).isTrue();
    }

    @Test
    void insufficientFunds_cancelsAndGivesTheHoldBack() {
        accounts(10, 0);
        TransactionOutcome outcome = manager(false, CrashHook.NONE).run(transfer(30));
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
        assertThat(stored("A").getLong("balance")).isEqualTo(10L);
        assertThat(stored("B").getLong("balance")).isEqualTo(0L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).isFalse();
    }

    @Test
    void refusedCredit_undoesTheHeldDebit() {
        accounts(100, 0);
        TransactionOutcome outcome = manager(false, CrashHook.NONE).run(List.of(
                Operation.increment(a, "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                Operation.increment(b, "balance", 30L, new Document("balance", new Document("$lt", 0L)))));
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(stored("A").getLong("balance")).as("the hold given back").isEqualTo(100L);
        assertThat(stored("B").getLong("balance")).isEqualTo(0L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).isFalse();
    }

    @Test
    void finishInBackground_returnsAtTheCommitPoint_thenReleases() {
        accounts(100, 0);
        TransactionManager manager = manager(true, CrashHook.NONE);
        TransactionOutcome outcome = manager.run(transfer(30));
        assertThat(outcome.state()).isEqualTo(TransactionState.APPLIED);
        assertThat(manager.readCommitted(b).orElseThrow().getLong("balance")).as("committed: the credit counts").isEqualTo(30L);
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
        assertThat(stored("B").getLong("balance")).isEqualTo(30L);
        assertThat(stored("B").getList("pendingTransactions", Object.class)).isEmpty();
        assertThat(hasEntry(stored("B"))).isFalse();
    }

    @Test
    void manyThreads_conserveMoneyAndLeaveNoMarker() throws Exception {
        accounts(1_000, 1_000);
        TransactionManager manager = manager(true, CrashHook.NONE);
        Set<TransactionState> states = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            boolean forward = t % 2 == 0;
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 25; i++) {
                    DocumentRef from = forward ? a : b;
                    DocumentRef to = forward ? b : a;
                    states.add(manager.run(List.of(
                            Operation.increment(from, "balance", -70L, new Document("balance", new Document("$gte", 70L))),
                            Operation.increment(to, "balance", 70L, null))).state());
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(manager.awaitFinished(Duration.ofSeconds(60))).isTrue();
        assertThat(stored("A").getLong("balance") + stored("B").getLong("balance")).isEqualTo(2_000L);
        assertThat(stored("A").getLong("balance")).isNotNegative();
        assertThat(stored("B").getLong("balance")).isNotNegative();
        assertThat(states).contains(TransactionState.APPLIED);
    }

    @Test
    void callersIdRunAgain_takesEffectOnce_andReturnsTheFirstOutcome() {
        accounts(100, 0);
        TransactionManager manager = manager(false, CrashHook.NONE);
        TransactionOutcome first = manager.run("pay-1", transfer(30));
        TransactionOutcome again = manager.run("pay-1", transfer(30));
        assertThat(first.state()).isEqualTo(TransactionState.DONE);
        assertThat(again.state()).isEqualTo(TransactionState.DONE);
        assertThat(stored("A").getLong("balance")).as("debited once").isEqualTo(70L);
        assertThat(stored("B").getLong("balance")).isEqualTo(30L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).as("the second call's prepares taken back").isFalse();
        assertThat(stored("A").getList("pendingTransactions", Object.class)).isEmpty();
    }

    @Test
    void callersIdRunConcurrently_takesEffectOnce() throws Exception {
        accounts(1_000, 0);
        TransactionManager manager = manager(false, CrashHook.NONE);
        List<Thread> threads = new ArrayList<>();
        Set<TransactionState> states = ConcurrentHashMap.newKeySet();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> states.add(manager.run(42L, transfer(30)).state()));
            thread.start();
            threads.add(thread);
        }
        for (Thread t : threads) {
            t.join();
        }
        // the first call's outcome, as each saw it: committed (applied, or done once released)
        assertThat(states).isNotEmpty().allMatch(s -> s == TransactionState.DONE || s == TransactionState.APPLIED);
        manager.awaitOutcome(42L, Duration.ofSeconds(30));
        assertThat(stored("A").getLong("balance")).as("debited once").isEqualTo(970L);
        assertThat(stored("B").getLong("balance")).isEqualTo(30L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).isFalse();
    }

    @Test
    void operatorCancel_ofAPendingTransactionWhoseOwnerIsGone_givesTheHoldBack() {
        accounts(100, 0);
        CrashHook die = (point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        Object[] id = new Object[1];
        CrashHook seeId = (point, tx) -> {
            id[0] = tx;
            die.reached(point, tx);
        };
        // Round 1 inserts the document pending (no commit insert): there is a transaction to cancel.
        TransactionManager owner = TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application("two-round").twoRoundCommit(true).commitInsert(false).finishInBackground(false).crashHook(seeId).build();
        assertThatThrownBy(() -> owner.run(transfer(30))).hasMessageContaining("process ends");
        mongo.expireLeases(mongo.database());
        CancelResult result = manager(false, CrashHook.NONE).cancel(id[0], "wrong amount");
        assertThat(result.isCanceled()).as(result.toString()).isTrue();
        assertThat(stored("A").getLong("balance")).isEqualTo(100L);
        assertThat(stored("B").getLong("balance")).isEqualTo(0L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).isFalse();
    }

    @Test
    void managerWithoutTheSetting_recoversATwoRoundTransactionByItsRules() {
        accounts(100, 0);
        CrashHook dieAfterCommit = (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new IllegalStateException("the owner's process ends here");
            }
        };
        assertThatThrownBy(() -> manager(false, dieAfterCommit).run(transfer(30))).hasMessageContaining("process ends");
        TransactionManager tutorialRules = TransactionManager.builder().target("default", mongo.client())
                .database(mongo.database()).application("default-rules").build();
        assertThat(tutorialRules.readCommitted(b).orElseThrow().getLong("balance")).as("committed: the credit counts").isEqualTo(30L);
        mongo.expireLeases(mongo.database());
        tutorialRules.recover(java.time.Duration.ZERO);
        assertThat(stored("A").getLong("balance")).isEqualTo(70L);
        assertThat(stored("B").getLong("balance")).as("the credit applied at the release, not dropped").isEqualTo(30L);
        assertThat(hasEntry(stored("A")) || hasEntry(stored("B"))).isFalse();
    }
}
