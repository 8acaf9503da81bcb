package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two payers of one order, each of which takes part of what both need (docs/CONFLICTS.md): the
 * older ("old") holds the order, the younger ("young") the payment's insert. The younger yields:
 * it undoes its round, waits for the older to finish and prepares again, then is refused by the
 * committed order; a crash between its undo and its new round leaves nothing that recovery does not
 * cancel.
 */
class ConflictYieldTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> docs;
    private final CountDownLatch oldHoldsTheOrder = new CountDownLatch(1);
    private final CountDownLatch youngHoldsThePayment = new CountDownLatch(1);

    @BeforeEach
    void order() {
        docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
        docs.insertOne(new Document("_id", "order").append("state", "UnPaid"));
    }

    private static List<Operation> payment(String payer) {
        return List.of(
                Operation.update(DocumentRef.of(mongo.database(), "docs", "order"), new Document("$set", new Document("state", "Paid")),
                        new Document("state", "UnPaid")),
                Operation.insert(DocumentRef.of(mongo.database(), "docs", "pay"), new Document("by", payer)));
    }

    /**
     * Old stops before its payment's prepare until young's has landed; young ends its round as
     * {@code young} says (null: as it goes).
     */
    private CrashHook hook(CrashHook young) {
        return (point, id) -> {
            if ("old".equals(id) && point.equals(CrashPoint.before(CrashPoint.Step.APPLY, 1))) {
                oldHoldsTheOrder.countDown();
                await(youngHoldsThePayment);
            }
            if ("young".equals(id)) {
                if (point.equals(CrashPoint.after(CrashPoint.Step.APPLY, 1))) {
                    youngHoldsThePayment.countDown();
                }
                young.reached(point, id);
            }
        };
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Starts old and returns once it holds the order and young, started now, is younger. */
    private CompletableFuture<TransactionOutcome> startOld(TransactionManager manager) throws InterruptedException {
        CompletableFuture<TransactionOutcome> old = CompletableFuture.supplyAsync(() -> manager.run("old", payment("old")));
        await(oldHoldsTheOrder);
        while (docs.find(new Document("_id", "order").append("_m2pc.tx", "old")).first() == null) {
            Thread.sleep(1);
        }
        Instant oldStarted = Instant.now();
        while (!Instant.now().isAfter(oldStarted.plusMillis(2))) {
            Thread.sleep(1); // young's start (its priority) is then later than old's by the same clock
        }
        return old;
    }

    @Test
    void run_youngerHoldsPartOfWhatAnOlderHolds_yieldsWaitsAndIsRefusedByTheCommittedOrder() throws Exception {
        TransactionManager manager = TestManagers.builder(mongo.client(), mongo.database(), "payers").finishInBackground(false)
                .crashHook(hook(CrashHook.NONE)).build();

        // given old holds the order and waits before its payment's insert
        CompletableFuture<TransactionOutcome> old = startOld(manager);

        // when young takes the payment's insert and meets old's lock on the order
        TransactionOutcome young = manager.run("young", payment("young"));

        // then young gave way and was refused by the order old paid; old paid
        assertThat(old.get(60, TimeUnit.SECONDS).state()).isEqualTo(TransactionState.DONE);
        assertThat(young.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(young.reasonCode()).as(young.reason()).isEqualTo(ReasonCode.GUARD_FAILED);
        assertThat(young.reason()).contains("/order");
        assertThat(docs.find(new Document("_id", "order")).first()).containsEntry("state", "Paid").doesNotContainKey("_m2pc");
        assertThat(docs.find(new Document("_id", "pay")).first()).containsEntry("by", "old").doesNotContainKey("_m2pc");
    }

    @Test
    void run_youngerCrashesAfterItsYieldUndidItsRound_olderPays_recoveryCancelsTheYounger() throws Exception {
        CrashHook crashAfterUndo = (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.UNDO, 1))) {
                throw new SimulatedCrash(point, id);
            }
        };
        TransactionManager manager = TestManagers.crashing(mongo.client(), mongo.database(), "payers", hook(crashAfterUndo))
                .finishInBackground(false).build();

        // given old holds the order and waits before its payment's insert
        CompletableFuture<TransactionOutcome> old = startOld(manager);

        // when young takes the payment's insert, meets old's lock, yields, and crashes once its insert is undone
        assertThatThrownBy(() -> manager.run("young", payment("young"))).isInstanceOf(SimulatedCrash.class);

        // then old pays; young, recovered after its lease, is canceled with nothing of it left
        assertThat(old.get(60, TimeUnit.SECONDS).state()).isEqualTo(TransactionState.DONE);
        mongo.expireLeases(mongo.database());
        TransactionManager recovering = TestManagers.builder(mongo.client(), mongo.database(), "recovery").build();
        recovering.recover();
        assertThat(recovering.awaitOutcome("young", java.time.Duration.ofSeconds(30)).orElseThrow().state())
                .isEqualTo(TransactionState.CANCELED);
        assertThat(docs.find(new Document("_id", "order")).first()).containsEntry("state", "Paid").doesNotContainKey("_m2pc");
        assertThat(docs.find(new Document("_id", "pay")).first()).containsEntry("by", "old").doesNotContainKey("_m2pc");
    }
}
