package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoClient;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An owner pauses just before its insert; another instance takes the transaction over (same
 * transaction id, later deadline) and the paused owner's insert arrives late. Regressions: the late
 * upsert matched the new owner's inserted copy and made it read as never written (read-committed
 * hid a committed insert, and a later transaction deleted it); after a cancel it left a document
 * with a marker that nothing removed.
 */
class PausedOwnerInsertTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash(String message) {
            super(message, null, false, false);
        }
    }

    @Test
    void lateInsertOfPausedOwner_afterTakeoverCommitted_leavesTheCommittedInsertReadable() throws Exception {
        Fixture f = new Fixture(100L);
        CompletableFuture<TransactionOutcome> owner = f.startPausedOwner();
        // The new owner applies the insert, lets the paused owner's late insert through, then
        // crashes right after the commit point (before releasing anything).
        CrashHook newOwner = (p, id) -> {
            if (p.equals(CrashPoint.before(CrashPoint.Step.APPLY, 1)) && f.resume.getCount() == 1) {
                f.resume.countDown();
                f.awaitQuietly(owner);
            }
            if (p.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new Crash("new owner stops after the commit point");
            }
        };
        f.recoverUntil(manager("new-owner", mongo.newClient(), newOwner, Duration.ofSeconds(30)), true);
        assertThat(f.transaction().getString("state")).isEqualTo("applied");
        assertThat(f.resume.getCount()).as("the paused owner's insert was let through").isZero();

        TransactionManager third = manager("third", mongo.newClient(), CrashHook.NONE, Duration.ofSeconds(30));
        assertThat(third.readCommitted(f.payment)).as("read-committed view of a committed insert").isPresent();

        // Recovery finishes the transaction (its new owner stopped), then a later transaction on the
        // payment must find it.
        mongo.expireLeases(mongo.database());
        third.recover(Duration.ZERO);
        assertThat(f.transaction().getString("state")).isEqualTo("done");
        assertThat(f.balance()).isEqualTo(70L);
        TransactionOutcome refund = third.run(List.of(Operation.update(f.payment, new Document("$set", new Document("refunded", true)), null)));
        assertThat(refund.state()).as("later update of p1: " + refund.reason()).isEqualTo(TransactionState.DONE);
        assertThat(f.stored()).as("the committed payment").isNotNull().containsEntry("amount", 30L).containsEntry("refunded", true);
    }

    @Test
    void lateInsertOfPausedOwner_afterTakeoverCanceled_leavesNoDocument() throws Exception {
        Fixture f = new Fixture(10L); // too little for the debit: the new owner cancels
        CompletableFuture<TransactionOutcome> owner = f.startPausedOwner();
        TransactionManager newOwner = manager("new-owner", mongo.newClient(), CrashHook.NONE, Duration.ofSeconds(30));
        f.recoverUntil(newOwner, false);
        assertThat(f.transaction().getString("state")).isEqualTo("canceled");

        f.resume.countDown();
        f.awaitQuietly(owner);
        assertThat(f.stored()).as("a canceled transaction's insert, sent late by its paused owner").isNull();
        assertThat(f.balance()).isEqualTo(10L);
    }

    @Test
    void lateInsertOfAPausedOwnerThatNeverAnswersAgain_afterTakeoverCanceled_isRemovedByRecovery() throws Exception {
        // The paused owner's insert was on the wire when its process stopped for good: nothing of
        // the owner notes it, the copy lands after the new owner canceled. The takeover noted the
        // transaction's inserts, so recovery removes what the copy left.
        Fixture f = new Fixture(10L);
        CompletableFuture<TransactionOutcome> owner = f.startPausedOwner();
        TransactionManager newOwner = manager("new-owner", mongo.newClient(), CrashHook.NONE, Duration.ofSeconds(30));
        f.recoverUntil(newOwner, false);
        assertThat(f.transaction().getString("state")).isEqualTo("canceled");
        // what the held upsert creates when it lands after its deadline
        Date deadline = Date.from(Instant.now().minusSeconds(1));
        f.client.getDatabase(f.db).getCollection("payments").insertOne(new Document("_id", "p1").append("amount", 30L)
                .append("_m2pc", new Document("tx", f.txId.get()).append("kind", "insert").append("c", f.db + ".transactions")
                        .append("until", deadline).append("at", new Date()))
                .append("pendingTransactions", List.of(f.txId.get())));

        newOwner.recover();

        assertThat(f.stored()).as("the late copy's document after recovery").isNull();
        f.resume.countDown();
        f.awaitQuietly(owner);
        assertThat(f.stored()).as("after the paused owner's own late insert").isNull();
    }

    @Test
    void lateInsertOfAnotherTransaction_madeValidJustBeforeItIsDeleted_stays() throws Exception {
        // A later writer finds a late insert and deletes it; its owner renews and writes it again
        // (valid now) just before that delete arrives: the delete must only take a copy still late.
        String db = mongo.database();
        Date past = Date.from(Instant.now().minusSeconds(60));
        mongo.client().getDatabase(db).getCollection("payments").insertOne(new Document("_id", "p1").append("amount", 1L)
                .append("_m2pc", new Document("tx", "T0").append("kind", "insert").append("until", past).append("at", new Date()))
                .append("pendingTransactions", List.of("T0")));
        DocumentRef payment = DocumentRef.of(db, "payments", "p1");
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBefore(request -> request.contains("delete") && request.contains("payments"),
                    () -> mongo.client().getDatabase(db).getCollection("payments").updateOne(new Document("_id", "p1"),
                            new Document("$set", new Document("_m2pc.until", Date.from(Instant.now().plusSeconds(60))))));
            TransactionManager later = manager("later", viaProxy, CrashHook.NONE, Duration.ofSeconds(30));

            TransactionOutcome outcome = later.run(List.of(Operation.insert(payment, new Document("amount", 2L))));

            assertThat(outcome.state()).as(outcome.reason()).isEqualTo(TransactionState.CANCELED);
            assertThat(outcome.reason()).contains("already exists");
        }
        Document p1 = mongo.client().getDatabase(db).getCollection("payments").find(new Document("_id", "p1")).first();
        assertThat(p1).as("T0's insert, valid again").isNotNull().containsEntry("amount", 1L);
        mongo.client().getDatabase(db).getCollection("payments").deleteOne(new Document("_id", "p1")); // T0 is a stand-in
    }

    /** One account; the transaction inserts a payment and debits the account under a guard. */
    private static final class Fixture {
        final String db = mongo.database();
        final MongoClient client = mongo.client();
        final DocumentRef payment = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "payments", "p1");
        final DocumentRef account = new DocumentRef(DocumentRef.DEFAULT_TARGET, db, "accounts", "A");
        final CountDownLatch paused = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        final AtomicReference<Object> txId = new AtomicReference<>();

        Fixture(long balance) {
            client.getDatabase(db).getCollection("accounts").insertOne(
                    new Document("_id", "A").append("balance", balance).append("pendingTransactions", List.of()));
        }

        /** Runs the transaction with a short lease; its owner pauses just before its insert. */
        CompletableFuture<TransactionOutcome> startPausedOwner() throws InterruptedException {
            CrashHook pauseBeforeInsert = (p, id) -> {
                if (id != null) {
                    txId.compareAndSet(null, id);
                }
                if (p.equals(CrashPoint.before(CrashPoint.Step.APPLY, 0)) && paused.getCount() == 1) {
                    paused.countDown();
                    try {
                        resume.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            TransactionManager owner = manager("paused-owner", client, pauseBeforeInsert, Duration.ofMillis(250));
            CompletableFuture<TransactionOutcome> running = CompletableFuture.supplyAsync(() -> owner.run(List.of(
                    Operation.insert(payment, new Document("amount", 30L)),
                    Operation.increment(account, "balance", -30L, new Document("balance", new Document("$gte", 30L))))));
            assertThat(paused.await(10, TimeUnit.SECONDS)).as("owner paused before its insert").isTrue();
            return running;
        }

        /** Recovery passes until the paused owner's lease ran out and {@code other} took over and finished (or crashed). */
        void recoverUntil(TransactionManager other, boolean crashes) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < until) {
                try {
                    RecoveryReport report = other.recover(Duration.ZERO);
                    if (!crashes && report.canceled() + report.rolledForward() > 0) {
                        return;
                    }
                } catch (Crash expected) {
                    return;
                }
                Thread.sleep(20);
            }
            throw new AssertionError("no takeover within 10 s");
        }

        void awaitQuietly(CompletableFuture<TransactionOutcome> owner) {
            try {
                owner.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the paused owner lost its transaction: any ending is fine, its writes are what is tested
            }
        }

        Document transaction() {
            return client.getDatabase(db).getCollection("transactions").find(new Document("_id", txId.get())).first();
        }

        Document stored() {
            return client.getDatabase(db).getCollection("payments").find(new Document("_id", "p1")).first();
        }

        long balance() {
            return client.getDatabase(db).getCollection("accounts").find(new Document("_id", "A")).first().getLong("balance");
        }
    }

    private static TransactionManager manager(String app, MongoClient client, CrashHook hook, Duration lease) {
        return TestManagers.crashing(client, mongo.database(), app, hook).twoRoundCommit(false).finishInBackground(false).lease(lease).maxClockSkew(Duration.ofMillis(50)).build();
    }
}
