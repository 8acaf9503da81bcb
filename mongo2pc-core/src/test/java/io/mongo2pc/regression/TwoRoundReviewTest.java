package io.mongo2pc.regression;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TwoAccounts;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Findings of an adversarial review of the two-round commit, each a test that shows the money
 * going wrong: transactions of the tutorial's rules and of the two-round rules meeting on one id.
 */
@Tag("slow")
class TwoRoundReviewTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** A hook that stops its thread at {@code at} (once) until {@code resume} opens. */
    static final class Pause implements CrashHook {
        final CrashPoint at;
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        private final AtomicBoolean once = new AtomicBoolean();

        Pause(CrashPoint at) {
            this.at = at;
        }

        @Override
        public void reached(CrashPoint point, Object transactionId) {
            if (point.equals(at) && once.compareAndSet(false, true)) {
                reached.countDown();
                try {
                    resume.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        void awaitReached() throws InterruptedException {
            assertThat(reached.await(30, TimeUnit.SECONDS)).as("paused at " + at).isTrue();
        }
    }

    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    private void accounts(long balanceA, long balanceB) {
        TwoAccounts two = TwoAccounts.create(mongo, balanceA, balanceB);
        accounts = two.collection();
        a = two.a();
        b = two.b();
    }

    private TransactionManager manager(MongoClient client, boolean twoRound, CrashHook hook) {
        return TransactionManager.builder().finishInBackground(false).target("default", client).database(mongo.database())
                .application(twoRound ? "rules2" : "rules1").twoRoundCommit(twoRound).crashHook(hook).build();
    }

    private List<Operation> transfer(DocumentRef from, DocumentRef to, long value) {
        return List.of(Operation.increment(from, "balance", -value, new Document("balance", new Document("$gte", value))),
                Operation.increment(to, "balance", value, null));
    }

    private long balance(String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    /**
     * Runs a transfer of 10 from A to B under {@code id} on a manager (lease 1 s) that crashes with
     * its prepares landed, before its insert. The prepares are fenced by that deadline: a machine
     * that stalls past it before they land gets them refused (nothing written, A keeps its
     * balance), so the crash is run again until A holds the 10.
     */
    private void crashBeforeInsert(String id) {
        long before = balance("A");
        for (int attempt = 0; attempt < 5 && balance("A") == before; attempt++) {
            runAndCrashBeforeInsert(id);
        }
        assertThat(balance("A")).as("the crashed run's hold").isEqualTo(before - 10);
    }

    private void runAndCrashBeforeInsert(String id) {
        TransactionManager crashing = TransactionManager.builder().finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                .application("crashing").twoRoundCommit(true).lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                .crashHook((point, tx) -> {
                    if (TestManagers.beforeTheDocument(point)) {
                        throw new IllegalStateException("simulated crash");
                    }
                }).build();
        try {
            crashing.run(id, transfer(a, b, 10));
        } catch (IllegalStateException crashed) {
            // round 1 lets what it sent land before the crash goes on: the prepares are in, no document
        }
    }

    private static boolean hasEntry(Document doc) {
        return doc.keySet().stream().anyMatch(k -> LibraryFields.entry(k));
    }

    /**
     * One id, run by a manager of the tutorial's rules and retried on a manager with the two-round
     * commit (a rolling switch of the setting, a client retrying a request on another instance).
     * The two-round run's prepares land first (its insert then finds the id taken); the tutorial
     * run's apply finds a marker with its id on each account, takes it for its own ("applied
     * before") and commits a transfer that moved nothing; its releases pull the other run's markers,
     * so the two-round run's undo finds no marker and the held debit is never given back.
     */
    @Test
    void sameIdOnBothRules_tutorialApplyTakesTwoRoundMarkerForItsOwn_committedTransferMovesNothing() throws Exception {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        Pause rules1Paused = new Pause(CrashPoint.before(CrashPoint.Step.APPLY, 0));
        Pause rules2Paused = new Pause(CrashPoint.after(CrashPoint.Step.APPLY, 1));
        TransactionManager rules1 = manager(mongo.client(), false, rules1Paused);
        TransactionManager rules2 = manager(mongo.newClient(), true, rules2Paused);

        CompletableFuture<TransactionOutcome> first = CompletableFuture.supplyAsync(() -> rules1.run("pay-1", transfer(a, b, 10)));
        rules1Paused.awaitReached();
        CompletableFuture<TransactionOutcome> retry = CompletableFuture.supplyAsync(() -> rules2.run("pay-1", transfer(a, b, 10)));
        rules2Paused.awaitReached(); // its prepares landed: A holds 10, B is marked; its insert found the id taken
        rules1Paused.resume.countDown();
        TransactionOutcome outcome = first.get(60, TimeUnit.SECONDS);
        rules2Paused.resume.countDown();
        TransactionOutcome retried = retry.get(60, TimeUnit.SECONDS);

        assertThat(retried.state()).as("the retry ends as the first call did").isEqualTo(outcome.state());
        assertThat(List.of(balance("A"), balance("B"))).as("outcome " + outcome.state() + ": money moved exactly if committed")
                .containsExactlyElementsOf(outcome.isCommitted() ? List.of(90L, 10L) : List.of(100L, 0L));
        assertThat(hasEntry(accounts.find(new Document("_id", "A")).first())).as("an entry left on A").isFalse();
    }

    /**
     * The network holds the owner's insert (round 1) while its prepares land. Past their deadline
     * plus the skew, recovery's sweep finds them without a document: a tombstone, the holds given
     * back. An operator prunes finished transactions (the tombstone is one). Then the held insert
     * lands, creating the document after its deadline; the owner takes it for its own, finds every
     * prepare "in effect" (as answered long before) and commits: a transfer reported committed that
     * moved nothing. Recovery cancels a document inserted after its deadline for exactly this
     * reason; the owner must not commit one either.
     */
    @Test
    void heldInsertLandingAfterTombstoneWasPruned_ownerCommitsTransferThatMovesNothing() throws Exception {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch deliver = new CountDownLatch(1);
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            proxy.runBefore(request -> request.contains("insertedAt") && request.contains("$setOnInsert"), () -> {
                held.countDown();
                try {
                    deliver.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            // Its prepares must land before its deadline (they are fenced by it): 5 s, so that a
            // loaded machine's stall does not get them refused; the sweep below waits that out.
            TransactionManager owner = TransactionManager.builder().finishInBackground(false).target("default", viaProxy).database(mongo.database())
                    .application("owner").twoRoundCommit(true).lease(Duration.ofSeconds(5))
                    .maxClockSkew(Duration.ofMillis(100)).build();
            CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run(transfer(a, b, 10)));
            assertThat(held.await(30, TimeUnit.SECONDS)).as("the insert is held").isTrue();
            TransactionManager other = TransactionManager.builder().finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                    .application("other").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100)).build();
            MongoCollection<Document> transactions = mongo.client().getDatabase(mongo.database()).getCollection("transactions");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((transactions.countDocuments(new Document("tombstone", true)) == 0 || balance("A") != 100L)
                    && System.nanoTime() < until) {
                Thread.sleep(200); // the sweep acts once the prepares' deadline plus the skew has passed
                other.recover(Duration.ZERO);
            }
            assertThat(balance("A")).as("the sweep gave the hold back").isEqualTo(100L);
            assertThat(other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned()).as("the tombstone pruned").isEqualTo(1L);
            deliver.countDown();
            TransactionOutcome outcome = run.get(60, TimeUnit.SECONDS);

            assertThat(List.of(balance("A"), balance("B"))).as("outcome " + outcome.state() + ": money moved exactly if committed")
                    .containsExactlyElementsOf(outcome.isCommitted() ? List.of(90L, 10L) : List.of(100L, 0L));
        }
    }

    /**
     * A string id may hold any character but an empty string (the tutorial's rules run "x\0y"); the
     * two-round entry is named after it, and a field name cannot hold a NUL character: the prepare
     * cannot be encoded, the caller gets the BSON library's exception and the transaction document
     * stays pending, which every recovery pass then fails on the same way.
     */
    @Test
    void stringIdWithNulCharacter_runsAsOnTheTutorialRules_insteadOfLeavingAPendingTransaction() {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        TransactionManager manager = manager(mongo.client(), true, CrashHook.NONE);
        TransactionOutcome outcome = manager.run("pay\u0000one", transfer(a, b, 10));

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(List.of(balance("A"), balance("B"))).containsExactly(90L, 10L);
        assertThat(manager.recover(Duration.ZERO).failed()).isZero();
    }

    /**
     * The round-1 insert is an upsert whose filter is meant to match no stored document
     * ({@code insertedAt} absent). A document of the tutorial's rules has no {@code insertedAt}:
     * the upsert matches it and stamps {@code lastModified} and {@code insertedAt} on another
     * transaction's document (here one whose owner crashed, so its recovery is put off by a whole
     * lease each time the id is tried again).
     */
    @Test
    void twoRoundInsert_ofAnIdTakenByATutorialRulesTransaction_leavesThatDocumentUnchanged() throws Exception {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        TransactionManager rules1 = manager(mongo.client(), false, (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.INSERT, -1))) {
                throw new IllegalStateException("simulated crash");
            }
        });
        try {
            rules1.run("pay-2", transfer(a, b, 10));
        } catch (IllegalStateException crashed) {
            // the owner is gone, its document pending
        }
        MongoCollection<Document> transactions = mongo.client().getDatabase(mongo.database()).getCollection("transactions");
        Document before = transactions.find(new Document("_id", "pay-2")).first();
        Thread.sleep(20);
        TransactionManager rules2 = manager(mongo.newClient(), true, CrashHook.NONE);
        try {
            rules2.run("pay-2", transfer(a, b, 20));
        } catch (InvalidTransactionException otherOperations) {
            // the id names another transaction
        }
        Document after = transactions.find(new Document("_id", "pay-2")).first();

        assertThat(after).as("the tutorial-rules transaction's document").isEqualTo(before);
        mongo.expireLeases(mongo.database());
        rules1.recover(Duration.ZERO);
    }

    /**
     * One id run twice (a caller's retry on another instance): one run crashes with its prepares
     * landed and its insert not sent; the other's insert makes the document, and it meets the
     * crashed run's marker (same id, another nonce) on each account. Past that entry's deadline it
     * belongs to a run that can never commit, and resolving it lets the payment through. The writer
     * skips every marker with its own id, waits out the conflict timeout and cancels the payment
     * the caller asked for twice.
     */
    @Test
    void crashedRerunOfTheSameId_isResolvedByTheFirstRun_insteadOfCancelingThePayment() {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        crashBeforeInsert("pay-3");
        assertThat(balance("A")).as("the crashed run's hold").isEqualTo(90L);
        // Lease 5 s: its own prepares are fenced by its deadline (a 1.5 s stall at 1 s canceled it).
        TransactionManager first = TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application("first").twoRoundCommit(true).lease(Duration.ofSeconds(5)).maxClockSkew(Duration.ofMillis(100))
                .conflictTimeout(Duration.ofSeconds(5)).build();
        TransactionOutcome outcome = first.run("pay-3", transfer(a, b, 10));

        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(List.of(balance("A"), balance("B"))).containsExactly(90L, 10L);
    }

    /**
     * A caller's call whose owner crashed in round 1 (prepares landed, no document) is resolved
     * behind a tombstone: canceled, TIMED_OUT. The caller retries the same payment under the same
     * id, as an id is meant for; the retry must answer with that outcome. It is refused instead as
     * "already used by another transaction (canceled, with other operations)": the tombstone has no
     * operations to compare.
     */
    @Test
    void retryOfAnIdResolvedBehindATombstone_getsItsCanceledOutcome_notAnotherTransactionsRefusal() throws Exception {
        accounts(100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        crashBeforeInsert("pay-4");
        // A sweep at every recover (the default is one per lease): the loop waits for the deadline.
        TransactionManager other = TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application("rules2").twoRoundCommit(true).sweepPeriod(Duration.ZERO).build();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (balance("A") != 100L && System.nanoTime() < until) {
            Thread.sleep(200); // the sweep acts once the prepares' deadline plus the skew has passed
            other.recover(Duration.ZERO);
        }
        assertThat(balance("A")).as("the hold given back behind a tombstone").isEqualTo(100L);

        TransactionOutcome retried = other.run("pay-4", transfer(a, b, 10));

        assertThat(retried.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(retried.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        assertThat(List.of(balance("A"), balance("B"))).containsExactly(100L, 0L);
    }
}
