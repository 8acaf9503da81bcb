package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With finishInBackground, a caller interrupted while it waits for room in the finisher's queue,
 * its transaction already applied (committed). Regression (found in review): it got a raw driver
 * exception, which a caller may take for a failure and retry (paying twice).
 */
class InterruptAfterCommitTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void callerInterruptedPastTheCommitPoint_isToldItCommitted() throws Exception {
        mongo.skipInvariants("the interrupted transaction stays applied until recovery");
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        List<DocumentRef> refs = new ArrayList<>();
        for (String id : List.of("A", "B", "C", "D", "E", "F")) {
            accounts.insertOne(new Document("_id", id).append("balance", 100L).append("pendingTransactions", List.of()));
            refs.add(new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "accounts", id));
        }
        CountDownLatch hold = new CountDownLatch(1);
        CrashHook blockFinisher = (point, id) -> {
            if (Thread.currentThread().getName().startsWith("mongo2pc-finisher")
                    && point.step() == CrashPoint.Step.RELEASE && point.phase() == CrashPoint.Phase.BEFORE) {
                try {
                    hold.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        TransactionManager manager = TransactionManager.builder().twoRoundCommit(false).target("default", mongo.client()).database(db)
                .application("app").maxMarkers(2).finishInBackground(true).crashHook(blockFinisher).build();
        // tx1 is taken by the finisher, which then waits in the hook; tx2 fills the queue (capacity 1)
        assertThat(manager.run(transfer(refs, 0, 1)).state()).isEqualTo(TransactionState.APPLIED);
        Thread.sleep(200);
        assertThat(manager.run(transfer(refs, 2, 3)).state()).isEqualTo(TransactionState.APPLIED);

        AtomicReference<Object> result = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                result.set(manager.run(transfer(refs, 4, 5)));
            } catch (Throwable t) {
                result.set(t);
            }
        });
        caller.start();
        // wait until tx3 is applied and its caller waits for room
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end && mongo.transactions(manager.settings().database()).countDocuments(new Document("state", "applied")) < 3) {
            Thread.sleep(10);
        }
        Thread.sleep(200);
        caller.interrupt();
        caller.join(10_000);
        hold.countDown();
        manager.awaitFinished(Duration.ofSeconds(10));
        List<Document> txs = mongo.transactions(manager.settings().database()).find().into(new ArrayList<>());
        assertThat(result.get()).as("what the caller of a committed transaction is told")
                .isInstanceOfSatisfying(TransactionOutcome.class, o -> assertThat(o.isCommitted()).isTrue());
        assertThat(txs).extracting(t -> t.getString("state")).as("the three transactions").hasSize(3)
                .allMatch(state -> state.equals("applied") || state.equals("done"));
        manager.close();
    }

    private static List<Operation> transfer(List<DocumentRef> refs, int from, int to) {
        return List.of(Operation.increment(refs.get(from), "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(refs.get(to), "balance", 10L, null));
    }
}
