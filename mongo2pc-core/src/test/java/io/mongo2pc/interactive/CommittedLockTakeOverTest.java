package io.mongo2pc.interactive;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.SimulatedCrash;
import io.mongo2pc.sweeps.Orphans;
import io.mongo2pc.testing.CommandsTo;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An optimistic attempt that reads documents still under the locks of a transaction that committed
 * (its releases not sent yet: here its owner stopped right after its commit point) reads them as
 * stored, and its takes replace those locks: no release of the other's, no second read. The other's
 * release, sent later by recovery, finds nothing of its own and is done; nothing is lost. A lock of a
 * transaction that has not committed is never replaced.
 */
class CommittedLockTakeOverTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    @BeforeEach
    void accounts() {
        accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertOne(new Document("_id", "A").append("balance", 100L));
        accounts.insertOne(new Document("_id", "B").append("balance", 0L));
        a = DocumentRef.of(mongo.database(), "accounts", "A");
        b = DocumentRef.of(mongo.database(), "accounts", "B");
    }

    /** A transfer of {@code amount} from A to B, written as a body; reads both with getAll when {@code together}. */
    private TransactionResult<Long> transfer(TransactionManager tm, long amount, boolean together) {
        return tm.transact(ctx -> {
            List<Optional<Document>> both = together ? ctx.getAll(List.of(a, b)) : List.of(ctx.get(a), ctx.get(b));
            long fromA = both.get(0).orElseThrow().getLong("balance");
            long toB = both.get(1).orElseThrow().getLong("balance");
            ctx.update(a, new Document("$set", new Document("balance", fromA - amount)));
            ctx.update(b, new Document("$set", new Document("balance", toB + amount)));
            return fromA - amount;
        });
    }

    /** A manager whose owner stops at {@code point} (a simulated crash), the id of the transaction it stopped kept in {@code stopped[0]}. */
    private static TransactionManager stoppingAt(CrashPoint point, String application, Object[] stopped) {
        return TestManagers.crashing(mongo.client(), mongo.database(), application, (at, tx) -> {
            if (at.equals(point)) {
                stopped[0] = tx;
                throw new SimulatedCrash(at, tx);
            }
        }).finishInBackground(false).build();
    }

    /** A transfer of 30 whose owner stops right after its commit point: both accounts keep its locks, committed. */
    private Object committedNotReleased() {
        Object[] id = new Object[1];
        TransactionManager stopsAfterCommit = stoppingAt(CrashPoint.after(Step.COMMIT, -1), "stops", id);
        assertThatThrownBy(() -> transfer(stopsAfterCommit, 30, true)).isInstanceOf(SimulatedCrash.class);
        for (String account : List.of("A", "B")) {
            assertThat(accounts.find(new Document("_id", account)).first().get("_m2pc", Document.class))
                    .as(account + " under the committed transfer's lock").containsEntry("tx", id[0]);
        }
        return id[0];
    }

    private void readAndTakeOverCommittedLocks(boolean together) {
        Object first = committedNotReleased();
        List<String> writes = new CopyOnWriteArrayList<>();
        try (MongoClient counting = CommandsTo.client(mongo.uri(), "accounts", (name, command) -> {
            if (name.equals("update")) {
                command.getArray("updates").forEach(u -> writes.add(((BsonDocument) u).getDocument("q").toJson()));
            }
        }); TransactionManager tm = TestManagers.builder(counting, mongo.database(), "second").finishInBackground(false).build()) {
            TransactionResult<Long> r = transfer(tm, 20, together);

            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(1);
            assertThat(r.value()).as("read the first transfer's committed A").isEqualTo(50L);
        }
        // Two takes and two releases, all of the second transfer: no release of the first's locks came first.
        assertThat(writes).as("updates sent to accounts").hasSize(4);
        assertThat(writes.subList(0, 2)).allSatisfy(q -> assertThat(q).contains("$or").contains(String.valueOf(first)));

        mongo.expireLeases(mongo.database());
        TransactionManager recovery = TestManagers.builder(mongo.client(), mongo.database(), "recovery").finishInBackground(false).build();
        recovery.recover();
        assertThat(accounts.find(new Document("_id", "A")).first()).containsEntry("balance", 50L).doesNotContainKey("_m2pc");
        assertThat(accounts.find(new Document("_id", "B")).first()).containsEntry("balance", 50L).doesNotContainKey("_m2pc");
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", first)).first().getString("state")).isEqualTo("done");
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void readOneByOne_underACommittedTransfersLocks_takesReplaceThem_andItsReleaseLaterChangesNothing() {
        readAndTakeOverCommittedLocks(false);
    }

    @Test
    void readTogether_underACommittedTransfersLocks_takesReplaceThem_andItsReleaseLaterChangesNothing() {
        readAndTakeOverCommittedLocks(true);
    }

    @Test
    void lockOfATransactionNotCommitted_isNeverReplaced_theAttemptLosesAndRunsAgain() {
        Object[] holder = new Object[1];
        TransactionManager stopsBeforeCommit = stoppingAt(CrashPoint.before(Step.COMMIT, -1), "holds", holder);
        assertThatThrownBy(() -> transfer(stopsBeforeCommit, 30, true)).isInstanceOf(SimulatedCrash.class);
        assertThat(accounts.find(new Document("_id", "A")).first().get("_m2pc", Document.class)).containsEntry("tx", holder[0]);

        // Its deadline passed (moved into the past): the second transfer undoes the lock it meets, never takes it over.
        assertThat(Orphans.expire(mongo.client().getDatabase(mongo.database()), TransactionManagerSettings.DEFAULT_MAX_CLOCK_SKEW)).isPositive();
        TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "second").finishInBackground(false).build();
        TransactionResult<Long> r = transfer(tm, 20, true);

        assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
        assertThat(r.value()).as("the holder never committed: A as it was, less 20").isEqualTo(80L);
        assertThat(accounts.find(new Document("_id", "B")).first()).containsEntry("balance", 20L).doesNotContainKey("_m2pc");
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    /**
     * A delete of a document under a committed transfer's lock replaces that lock too (the attempt
     * commits at once; without the replacement it loses to the lock and runs again), beside a read of
     * a document whose committed insert's lock is still on it. Recovery later finds nothing of the
     * first transfer's to release.
     */
    @Test
    void deleteUnderACommittedLock_andAReadOfACommittedInsert_commitAtTheFirstAttempt() {
        Object first = committedNotReleased();
        DocumentRef receipt = DocumentRef.of(mongo.database(), "accounts", "receipt");
        Object[] inserter = new Object[1];
        TransactionManager insertsThenStops = stoppingAt(CrashPoint.after(Step.COMMIT, -1), "inserts", inserter);
        assertThatThrownBy(() -> insertsThenStops.transact(ctx -> ctx.insert(receipt, new Document("for", "A"))))
                .isInstanceOf(SimulatedCrash.class);
        assertThat(accounts.find(new Document("_id", "receipt")).first().get("_m2pc", Document.class))
                .as("the receipt under its committed insert's lock").containsEntry("tx", inserter[0]).containsEntry("kind", "insert");

        try (TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "second").finishInBackground(false).build()) {
            TransactionResult<String> r = tm.transact(ctx -> {
                String forWhom = ctx.get(receipt).orElseThrow().getString("for"); // only read
                long balance = ctx.get(a).orElseThrow().getLong("balance");
                ctx.delete(a);
                ctx.update(b, new Document("$inc", new Document("balance", balance)));
                return forWhom;
            });

            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(1);
            assertThat(r.value()).isEqualTo("A");
        }
        mongo.expireLeases(mongo.database());
        TestManagers.builder(mongo.client(), mongo.database(), "recovery").finishInBackground(false).build().recover();
        assertThat(accounts.find(new Document("_id", "A")).first()).isNull();
        assertThat(accounts.find(new Document("_id", "B")).first()).containsEntry("balance", 100L).doesNotContainKey("_m2pc");
        assertThat(accounts.find(new Document("_id", "receipt")).first()).containsEntry("for", "A").doesNotContainKey("_m2pc");
        assertThat(mongo.transactions(mongo.database()).find(new Document("_id", first)).first().getString("state")).isEqualTo("done");
    }

    /**
     * A document only read, deleted after the read by a transaction that committed and stopped
     * before its release (its delete lock still there): the check passes committed locks, but the
     * document is gone in the committed view, so the attempt loses and the body runs again, and
     * sees it gone.
     */
    @Test
    void documentOnlyRead_deletedSinceByACommittedTransaction_lockStillThere_theBodyRunsAgain() {
        accounts.insertOne(new Document("_id", "promo").append("bonus", 5L));
        DocumentRef promo = DocumentRef.of(mongo.database(), "accounts", "promo");
        TransactionManager deletesThenStops = stoppingAt(CrashPoint.after(Step.COMMIT, -1), "deletes", new Object[1]);
        AtomicInteger runs = new AtomicInteger();
        try (TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "second").finishInBackground(false).build()) {
            TransactionResult<Long> r = tm.transact(ctx -> {
                long bonus = ctx.get(promo).map(d -> d.getLong("bonus")).orElse(0L); // only read
                if (runs.incrementAndGet() == 1) {
                    assertThatThrownBy(() -> deletesThenStops.transact(other -> other.delete(promo))).isInstanceOf(SimulatedCrash.class);
                    assertThat(accounts.find(new Document("_id", "promo")).first().get("_m2pc", Document.class))
                            .as("deleted, committed, its lock still there").containsEntry("kind", "delete");
                }
                ctx.update(b, new Document("$inc", new Document("balance", bonus)));
                return bonus;
            });

            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(2);
            assertThat(r.value()).as("the promotion was gone when the transaction committed").isZero();
        }
        assertThat(accounts.find(new Document("_id", "B")).first()).containsEntry("balance", 0L);
        mongo.expireLeases(mongo.database());
        TestManagers.builder(mongo.client(), mongo.database(), "recovery").finishInBackground(false).build().recover();
        assertThat(accounts.find(new Document("_id", "promo")).first()).isNull();
    }

    /**
     * The attempt that replaced the committed transfer's locks loses afterwards (a document it only
     * read changed): its undo puts back the committed transfer's state, content and version, with no
     * lock; the body runs again and commits from there.
     */
    @Test
    void attemptThatReplacedCommittedLocks_loses_itsUndoRestoresTheCommittedStateAndVersion() {
        committedNotReleased();
        Document committedA = new Document(accounts.find(new Document("_id", "A")).first());
        committedA.remove("_m2pc");
        accounts.insertOne(new Document("_id", "rate").append("fee", 0L));
        DocumentRef rate = DocumentRef.of(mongo.database(), "accounts", "rate");
        List<Document> afterUndo = new CopyOnWriteArrayList<>();
        AtomicInteger runs = new AtomicInteger();
        try (TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "second").finishInBackground(false).build()) {
            TransactionResult<Long> r = tm.transact(ctx -> {
                if (runs.get() == 1) { // the first attempt is undone before the body runs again
                    afterUndo.add(accounts.find(new Document("_id", "A")).first());
                }
                List<Optional<Document>> both = ctx.getAll(List.of(a, b));
                long fee = ctx.get(rate).orElseThrow().getLong("fee");
                if (runs.incrementAndGet() == 1) { // the rate changes and commits after this attempt read it
                    CompletableFuture.runAsync(() -> tm.transact(other -> other.update(rate, new Document("$set",
                            new Document("fee", 0L).append("changedAt", 1L))))).join();
                }
                long fromA = both.get(0).orElseThrow().getLong("balance");
                ctx.update(a, new Document("$set", new Document("balance", fromA - 20 - fee)));
                ctx.update(b, new Document("$set", new Document("balance", both.get(1).orElseThrow().getLong("balance") + 20 + fee)));
                return fromA - 20 - fee;
            });

            assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
            assertThat(r.attempts()).isEqualTo(2);
            assertThat(r.value()).isEqualTo(50L);
        }
        assertThat(afterUndo).as("A once the first attempt was undone").containsExactly(committedA);
        assertThat(accounts.find(new Document("_id", "A")).first()).containsEntry("balance", 50L).doesNotContainKey("_m2pc");
        assertThat(accounts.find(new Document("_id", "B")).first()).containsEntry("balance", 50L).doesNotContainKey("_m2pc");
        mongo.expireLeases(mongo.database());
        TestManagers.builder(mongo.client(), mongo.database(), "recovery").finishInBackground(false).build().recover();
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    /**
     * Two doctors on call. Alice's second attempt (after a conflict) takes Bob's document only to read
     * it, and waits before reading her own; Bob, reading both meanwhile, must not take his document
     * over her lock (it is not committed, and it leaves his version as it was): his take loses, and
     * once Alice went off he stays on. Replacing any lock would let both go off.
     */
    @Test
    void lockTakenOnlyToRead_byAnAttemptNotCommitted_isNeverReplaced_noWriteSkew() throws Exception {
        MongoCollection<Document> doctors = mongo.client().getDatabase(mongo.database()).getCollection("doctors");
        doctors.insertMany(List.of(new Document("_id", "alice").append("onCall", true), new Document("_id", "bob").append("onCall", true)));
        DocumentRef alice = DocumentRef.of(mongo.database(), "doctors", "alice");
        DocumentRef bob = DocumentRef.of(mongo.database(), "doctors", "bob");
        CountDownLatch bobsFirstAttemptOver = new CountDownLatch(1);
        CountDownLatch aliceHoldsBob = new CountDownLatch(1);
        TransactionManager alices = TestManagers.builder(mongo.client(), mongo.database(), "alice").finishInBackground(false).build();
        TransactionManager bobs = TestManagers.crashing(mongo.newClient(), mongo.database(), "bob", (point, tx) -> {
            if (point.equals(CrashPoint.after(Step.COMMIT, -1))) {
                bobsFirstAttemptOver.countDown(); // it committed
            }
        }).finishInBackground(false).build();
        AtomicInteger aliceRuns = new AtomicInteger();
        CompletableFuture<TransactionResult<Boolean>> aliceGoesOff = CompletableFuture.supplyAsync(() -> alices.transact(ctx -> {
            boolean bobOn = ctx.get(bob).orElseThrow().getBoolean("onCall");
            if (aliceRuns.incrementAndGet() == 1) { // a commit on Bob's document after her read: this attempt loses
                CompletableFuture.runAsync(() -> alices.transact(other -> other.update(bob, new Document("$set",
                        new Document("touched", true))))).join();
            } else {
                aliceHoldsBob.countDown(); // her second attempt took Bob's document to read it
                bobsFirstAttemptOver.await(10, TimeUnit.SECONDS);
            }
            boolean aliceOn = ctx.get(alice).orElseThrow().getBoolean("onCall");
            if (aliceOn && bobOn) {
                ctx.update(alice, new Document("$set", new Document("onCall", false)));
                return true;
            }
            return false;
        }));
        assertThat(aliceHoldsBob.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(doctors.find(new Document("_id", "bob")).first().get("_m2pc", Document.class)).as("Alice's lock, to read")
                .doesNotContainKey("undo");

        AtomicInteger bobRuns = new AtomicInteger();
        TransactionResult<Boolean> bobGoesOff = bobs.transact(ctx -> {
            if (bobRuns.incrementAndGet() == 2) {
                bobsFirstAttemptOver.countDown(); // it lost
            }
            boolean aliceOn = ctx.get(alice).orElseThrow().getBoolean("onCall");
            boolean bobOn = ctx.get(bob).orElseThrow().getBoolean("onCall");
            if (aliceOn && bobOn) {
                ctx.update(bob, new Document("$set", new Document("onCall", false)));
                return true;
            }
            return false;
        });
        TransactionResult<Boolean> aliceResult = aliceGoesOff.get(30, TimeUnit.SECONDS);

        assertThat(aliceResult.value()).as("Alice went off").isTrue();
        assertThat(bobGoesOff.value()).as("Bob stayed on, having seen Alice off").isFalse();
        assertThat(bobGoesOff.attempts()).as("his first take met her lock and lost").isGreaterThan(1);
        assertThat(doctors.find(new Document("onCall", true)).into(new java.util.ArrayList<>())).extracting(d -> d.get("_id"))
                .containsExactly("bob");
        alices.close();
        bobs.close();
    }
}
