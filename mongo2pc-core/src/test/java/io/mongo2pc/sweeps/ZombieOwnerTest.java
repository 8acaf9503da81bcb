package io.mongo2pc.sweeps;

import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing: an owner paused (as by GC or SIGSTOP) between any two of its writes, past its lease,
 * while another instance finishes or cancels its transaction, then resumed with its next write in
 * hand, changes nothing: no operation applied twice or after the cancel, no state moved back. The
 * lease runs out in real server time here (a paused owner's deadline is server time), so each
 * round waits a short lease. Here a transfer is two guarded increments stored with the
 * transaction; the bank's tests run the same sweep on transfers in the tutorial's shape and on
 * payments (subclasses set the managers' settings and the transaction).
 */
public class ZombieOwnerTest {
    @RegisterExtension
    protected static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration OWNER_LEASE = Duration.ofMillis(250);
    private static MongoClient otherClient;
    private int round;

    /** What the other instance does once the owner's lease has run out. */
    enum Takeover { RECOVER, CANCEL }

    @Test
    void pausedOwner_resumesAfterAnotherInstanceFinishedIt_everyLateWriteMatchesNothing() throws Exception {
        int rounds = 0;
        for (Takeover takeover : Takeover.values()) {
            for (CrashPoint point : pointsOfACleanTransfer()) {
                if (beforeTheDocument(point)) {
                    continue; // nothing exists yet: the transfer simply starts when resumed
                }
                pauseAt(point, takeover);
                rounds++;
            }
        }
        assertThat(rounds).isGreaterThanOrEqualTo(20);
    }

    /** True for the points at which the transaction document does not exist yet. */
    protected boolean beforeTheDocument(CrashPoint point) {
        return point.step() == CrashPoint.Step.INSERT && point.phase() == CrashPoint.Phase.BEFORE;
    }

    /** The rules of every manager: the tutorial's, finished inline (the two-round test: the default rules). */
    protected TransactionManagerBuilder rules(TransactionManagerBuilder builder) {
        return builder.twoRoundCommit(false).finishInBackground(false);
    }

    /** The settings of every manager (the bank's codec). */
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder;
    }

    /** The transaction the owner runs: 100 from A to B as two guarded increments ({@link Transfers#of}). */
    protected TransactionOutcome start(TransactionManager owner) {
        return owner.run(Transfers.of(owner.settings().database(), "A", "B", 100L));
    }

    /** The documents of a fresh database the transaction runs on: accounts A and B of 1000 each. */
    protected void setUp(TransactionManager setup) {
        Transfers.createAccount(mongo.client().getDatabase(setup.settings().database()), "A", 1000L);
        Transfers.createAccount(mongo.client().getDatabase(setup.settings().database()), "B", 1000L);
    }

    /** What the transaction changes, as stored. */
    protected List<Object> observed(String db) {
        return new ArrayList<>(balances(db));
    }

    /** {@link #observed} once the transaction ended {@code done}, or with nothing in effect. */
    protected List<Object> expected(boolean done) {
        return done ? List.of(900L, 1100L) : List.of(1000L, 1000L);
    }

    /** The total of the accounts' balances once the transaction ended {@code done}, or with nothing in effect. */
    protected long total(boolean done) {
        return 2000L;
    }

    /** The collections whose documents must carry no lock, entry or marker once the transaction ended. */
    protected List<String> collections() {
        return List.of("accounts");
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
                await(resume);
            }
        };
        TransactionManager owner = manager(db, "owner", mongo.client(), pauseOnce, ownerLease());
        CompletableFuture<TransactionOutcome> running = CompletableFuture.supplyAsync(() -> start(owner));
        assertThat(paused.await(10, TimeUnit.SECONDS)).as("owner reached " + point).isTrue();

        // Another instance waits out the owner's lease (server time) and finishes or cancels the transaction.
        TransactionManager other = manager(db, "other", other(), CrashHook.NONE, Duration.ofSeconds(30));
        Document settled;
        try {
            settled = settle(db, txId.get(), other, takeover);
        } catch (AssertionError e) {
            throw new AssertionError("owner paused at " + point + ": " + e.getMessage(), e);
        }
        List<Object> afterTakeover = observed(db);

        resume.countDown();
        String ownerEnding;
        try {
            TransactionOutcome outcome = running.get(30, TimeUnit.SECONDS);
            ownerEnding = "returned " + outcome.state();
            if (Boolean.TRUE.equals(settled.get("tombstone"))) {
                // Paused with prepares and no document (before a commit insert): the sweep undid them
                // behind a tombstone, which the owner's insert meets; it reports the cancel.
                assertThat(outcome.state()).as("owner resumed at " + point + " after a tombstone").isEqualTo(TransactionState.CANCELED);
            } else if (outcome.isCommitted()) {
                // Only an owner paused past its commit point may report committed (the other instance
                // finished it): its later writes match nothing, and it was committed.
                assertThat(pastTheCommitPoint(point)).as("owner returned " + outcome + " after pausing at " + point).isTrue();
                assertThat(settled.getString("state")).as("owner resumed at " + point).isEqualTo("done");
            } else {
                // Canceled only as the other instance settled it: a commit insert that ran after its
                // deadline (a lease this short, on a busy machine) counts as canceled, and its owner reads it back.
                assertThat(outcome.state()).as("owner resumed at " + point).isEqualTo(TransactionState.CANCELED);
                assertThat(settled.getString("state")).as("owner resumed at " + point + " and returned canceled").isEqualTo("canceled");
            }
        } catch (java.util.concurrent.ExecutionException e) {
            ownerEnding = "threw " + e.getCause();
            assertThat(e.getCause()).as("owner resumed at " + point).isInstanceOf(LeaseLostException.class);
        }

        String what = takeover + ", owner paused at " + point + " and " + ownerEnding;
        Document after = transaction(db, txId.get());
        assertThat(after.getString("state")).as(what + ": state").isEqualTo(settled.getString("state"));
        assertThat(after.get("epoch")).as(what + ": epoch").isEqualTo(settled.get("epoch"));
        assertThat(observed(db)).as(what + ": balances").isEqualTo(afterTakeover);
        boolean done = TransactionState.parse(after.getString("state")).orElseThrow() == TransactionState.DONE;
        assertThat(observed(db)).as(what + ": atomic").isEqualTo(expected(done));
        assertThat(new Invariants(mongo.client(), db).expectTotal(db, total(done)).violations()).as(what).isEmpty();
        Leftovers.assertNoneLeft(mongo.client().getDatabase(db), collections(), what);
        mongo.client().getDatabase(db).drop();
    }

    /** True for the points at which the owner's commit is written: its answer, the releases and the move to done. */
    private static boolean pastTheCommitPoint(CrashPoint point) {
        return point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1)) || point.step() == CrashPoint.Step.RELEASE
                || point.step() == CrashPoint.Step.FINISH;
    }

    /** Repeats recovery (or cancel) by the other instance until the transaction is terminal. */
    private Document settle(String db, Object txId, TransactionManager other, Takeover takeover) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            Document tx = transaction(db, txId);
            if (tx == null) {
                // Two-round: prepares without a document (an owner paused before its commit insert, or
                // at an update's change beside the insert): the sweep resolves them once the owner's
                // deadline has passed, behind a tombstone.
                other.recover(Duration.ZERO);
                Thread.sleep(20);
                continue;
            }
            TransactionState state = TransactionState.parse(tx.getString("state")).orElseThrow();
            if (state.isTerminal() && Boolean.TRUE.equals(tx.get("tombstone"))) {
                // A sweep that met a participant just before the deadline had passed left it to the
                // next sweep, which may come after the tombstone one of them wrote: sweep once more.
                other.recover(Duration.ZERO);
                return tx;
            }
            if (state.isTerminal()) {
                return tx;
            }
            if (takeover == Takeover.CANCEL && state == TransactionState.PENDING) {
                try {
                    other.cancel(txId, "canceled while its owner was paused");
                } catch (io.mongo2pc.TransactionException stillOwned) {
                    Thread.sleep(20); // the owner's lease has not run out yet
                }
            } else {
                other.recover(Duration.ZERO);
                Thread.sleep(20);
            }
        }
        Document tx = transaction(db, txId);
        throw new AssertionError("transaction not settled by the other instance (" + takeover + "): "
                + (tx == null ? "no transaction document " + txId + " while its owner is paused" : tx.toJson()));
    }

    /** The owner's lease: short, since each round waits it out (a subclass with more writes per transaction may lengthen it). */
    protected Duration ownerLease() {
        return OWNER_LEASE;
    }

    /**
     * The points of a run that commits; a probe that a loaded machine made miss its deadline (and
     * cancel) is run again, so that every point listed is one a committing run reaches.
     */
    private List<CrashPoint> pointsOfACleanTransfer() {
        for (int attempt = 1; ; attempt++) {
            String db = freshDatabase();
            Set<CrashPoint> points = Collections.synchronizedSet(new LinkedHashSet<>()); // the hook runs on several threads
            TransactionOutcome outcome = start(manager(db, "probe", mongo.client(), (p, id) -> points.add(p), ownerLease()));
            mongo.client().getDatabase(db).drop();
            if (outcome.state() == TransactionState.DONE || attempt == 3) {
                assertThat(outcome.state()).as("a probe run, " + attempt + " attempts").isEqualTo(TransactionState.DONE);
                synchronized (points) {
                    return new ArrayList<>(points);
                }
            }
        }
    }

    private String freshDatabase() {
        String db = mongo.database() + "_" + (++round) + "_";
        setUp(manager(db, "setup", mongo.client(), CrashHook.NONE, Duration.ofSeconds(30)));
        return db;
    }

    private TransactionManager manager(String db, String app, MongoClient client, CrashHook hook, Duration lease) {
        return configure(rules(TestManagers.crashing(client, db, app, hook).lease(lease)
                .maxClockSkew(Duration.ofMillis(50)).sweepPeriod(Duration.ZERO))).build();
    }

    /** The server's clients end with the test class (a subclass runs on a server of its own). */
    @AfterAll
    static void forgetClients() {
        otherClient = null;
    }

    private static MongoClient other() {
        if (otherClient == null) {
            otherClient = mongo.newClient();
        }
        return otherClient;
    }

    private static Document transaction(String db, Object id) {
        return mongo.client().getDatabase(db).getCollection("transactions").find(new Document("_id", id)).first();
    }

    private static List<Long> balances(String db) {
        List<Long> balances = new ArrayList<>();
        for (String id : List.of("A", "B")) {
            balances.add(mongo.client().getDatabase(db).getCollection("accounts").find(new Document("_id", id)).first().getLong("balance"));
        }
        return balances;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
