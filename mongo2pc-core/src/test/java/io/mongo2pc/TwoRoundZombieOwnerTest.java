package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing on the two-round commit: an owner paused between any two of its writes (round 1
 * included: prepares landed and the insert not sent), past its lease and its prepares' deadline,
 * while another instance recovers, sweeps or cancels its transaction; resumed, it changes nothing
 * the other instance settled: no hold or credit twice, none after the cancel, no state moved back.
 */
class TwoRoundZombieOwnerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofMillis(400);
    private static final Duration SKEW = Duration.ofMillis(50);
    private static MongoClient otherClient;
    private int round;

    enum Takeover { RECOVER, CANCEL }

    @Test
    void pausedOwner_resumesAfterAnotherInstanceSettledIt_changesNothing() throws Exception {
        int rounds = 0;
        for (Takeover takeover : Takeover.values()) {
            for (CrashPoint point : pointsOfACleanTransfer()) {
                if (point.step() == CrashPoint.Step.APPLY && point.phase() == CrashPoint.Phase.BEFORE) {
                    continue; // round 1 not sent yet: nothing exists, the transfer simply starts when resumed
                }
                pauseAt(point, takeover);
                rounds++;
            }
        }
        assertThat(rounds).isGreaterThan(12);
    }

    private void pauseAt(CrashPoint point, Takeover takeover) throws Exception {
        String db = freshDatabase();
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicReference<Object> txId = new AtomicReference<>();
        CrashHook pauseOnce = (p, id) -> {
            if (id != null) {
                txId.compareAndSet(null, id);
            }
            if (p.equals(point) && paused.getCount() == 1) {
                paused.countDown();
                try {
                    resume.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        TransactionManager owner = manager(db, "owner", mongo.client(), pauseOnce, LEASE);
        CompletableFuture<TransactionOutcome> running = CompletableFuture.supplyAsync(() -> owner.run(transfer(db)));
        assertThat(paused.await(10, TimeUnit.SECONDS)).as("owner reached " + point).isTrue();

        TransactionManager other = manager(db, "other", other(), CrashHook.NONE, Duration.ofSeconds(30));
        Document settled = settle(db, txId.get(), other, takeover, point);
        List<Long> balancesSettled = balances(db);

        resume.countDown();
        String ending;
        try {
            TransactionOutcome outcome = running.get(30, TimeUnit.SECONDS);
            ending = "returned " + outcome.state();
            assertThat(outcome.state().stored()).as(takeover + ", owner paused at " + point + ": what it returned")
                    .isEqualTo(settled.getString("state"));
        } catch (ExecutionException e) {
            ending = "threw " + e.getCause();
            assertThat(e.getCause()).as(takeover + ", owner paused at " + point).isInstanceOf(LeaseLostException.class);
        }
        String what = takeover + ", owner paused at " + point + " and " + ending;
        Document after = transaction(db, txId.get());
        assertThat(after.getString("state")).as(what + ": state").isEqualTo(settled.getString("state"));
        assertThat(after.get("epoch")).as(what + ": epoch").isEqualTo(settled.get("epoch"));
        assertThat(balances(db)).as(what + ": balances").isEqualTo(balancesSettled);
        boolean done = TransactionState.parse(after.getString("state")).orElseThrow() == TransactionState.DONE;
        assertThat(balances(db)).as(what + ": atomic").isEqualTo(done ? List.of(900L, 1100L) : List.of(1000L, 1000L));
        assertThat(new Invariants(mongo.client(), db).expectTotal(db, 2000L).violations()).as(what).isEmpty();
        for (Document account : accounts(db).find()) {
            assertThat(account.keySet()).as(what + ": entries left").noneMatch(k -> k.startsWith("_m2pc_"));
        }
        mongo.client().getDatabase(db).drop();
    }

    /** Recovery (with its sweep) or cancel by the other instance until the transaction is terminal. */
    private Document settle(String db, Object txId, TransactionManager other, Takeover takeover, CrashPoint point)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Document tx = transaction(db, txId);
            TransactionState state = tx == null ? null : TransactionState.parse(tx.getString("state")).orElseThrow();
            if (state != null && state.isTerminal() && !hasMarkers(db)) {
                return tx;
            }
            if (takeover == Takeover.CANCEL && state == TransactionState.PENDING) {
                CancelResult result = other.cancel(txId, "canceled while its owner was paused");
                if (result.kind() == CancelResult.Kind.OWNER_ALIVE) {
                    Thread.sleep(20);
                }
            } else {
                other.recover(Duration.ZERO);
                Thread.sleep(20);
            }
        }
        throw new AssertionError(takeover + ", owner paused at " + point + ": not settled by the other instance: "
                + transaction(db, txId));
    }

    private boolean hasMarkers(String db) {
        return accounts(db).countDocuments(new Document("pendingTransactions.0", new Document("$exists", true))) > 0;
    }

    private List<CrashPoint> pointsOfACleanTransfer() {
        String db = freshDatabase();
        Set<CrashPoint> points = new LinkedHashSet<>();
        assertThat(manager(db, "probe", mongo.client(), (p, id) -> points.add(p), LEASE).run(transfer(db)).state())
                .isEqualTo(TransactionState.DONE);
        mongo.client().getDatabase(db).drop();
        return new ArrayList<>(points);
    }

    private String freshDatabase() {
        String db = mongo.database() + "_" + (++round) + "_";
        accounts(db).insertMany(List.of(new Document("_id", "A").append("balance", 1000L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 1000L).append("pendingTransactions", List.of())));
        return db;
    }

    private static List<Operation> transfer(String db) {
        return List.of(Operation.increment(DocumentRef.of(db, "accounts", "A"), "balance", -100L,
                        new Document("balance", new Document("$gte", 100L))),
                Operation.increment(DocumentRef.of(db, "accounts", "B"), "balance", 100L, null));
    }

    private static TransactionManager manager(String db, String app, MongoClient client, CrashHook hook, Duration lease) {
        return TransactionManager.builder().target("default", client).database(db).application(app).twoRoundCommit(true)
                .crashHook(hook).lease(lease).maxClockSkew(SKEW).retryTimeout(Duration.ofSeconds(5)).build();
    }

    private static MongoClient other() {
        if (otherClient == null) {
            otherClient = mongo.newClient();
        }
        return otherClient;
    }

    private static MongoCollection<Document> accounts(String db) {
        return mongo.client().getDatabase(db).getCollection("accounts");
    }

    private static Document transaction(String db, Object id) {
        return mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", id)).first();
    }

    private static List<Long> balances(String db) {
        List<Long> balances = new ArrayList<>();
        for (String id : List.of("A", "B")) {
            balances.add(accounts(db).find(new Document("_id", id)).first().getLong("balance"));
        }
        return balances;
    }
}
