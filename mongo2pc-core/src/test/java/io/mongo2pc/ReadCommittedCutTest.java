package io.mongo2pc;

import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code readCommitted(List)}: several documents as one cut while writers change them. It must
 * give up with a {@link TransactionException} at its deadline when the documents never hold still,
 * and it must not need them to hold still when what changed them is known.
 */
@Tag("slow")
class ReadCommittedCutTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();
    /** A unit of money in the stress test: amounts are whole units plus a random fraction of one. */
    private static final long UNIT = 1L << 20;

    static final class Stop extends RuntimeException {
        Stop() {
            super("stop after the commit point", null, false, false);
        }
    }

    @Test
    void readCommitted_underHeavyContention_neverThrowsNegativeTimeout() throws Exception {
        // Regression: the wait between attempts was Math.min(50, 1L << attempt), negative from
        // attempt 63 on, so documents that kept changing ended in IllegalArgumentException
        // ("timeout value is negative") instead of the documented TransactionException.
        Accounts accounts = new Accounts(2, 100L);
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            // a writer outside any transaction changes A before every read of the accounts
            proxy.runBeforeEvery(accounts::isAccountsFind,
                    () -> accounts.coll.updateOne(new Document("_id", "a0"), new Document("$inc", new Document("touched", 1))));
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(accounts.db)
                    .application("reader").conflictTimeout(Duration.ofSeconds(4)).build();

            long start = System.nanoTime();
            Throwable thrown = catchThrowable(() -> reader.readCommitted(accounts.refs));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            proxy.stopEvery();

            assertThat(thrown).as("after %d ms", tookMs).isExactlyInstanceOf(TransactionException.class)
                    .hasMessageContaining("one consistent cut");
        }
    }

    @Test
    void readCommitted_withATimeout_givesUpAtItsDeadline() throws Exception {
        Accounts accounts = new Accounts(2, 100L);
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBeforeEvery(accounts::isAccountsFind,
                    () -> accounts.coll.updateOne(new Document("_id", "a1"), new Document("$inc", new Document("touched", 1))));
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(accounts.db)
                    .application("reader").build();

            long start = System.nanoTime();
            assertThatThrownBy(() -> reader.readCommitted(accounts.refs, Duration.ofMillis(300)))
                    .isExactlyInstanceOf(TransactionException.class).hasMessageContaining("300ms");
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            proxy.stopEvery();

            assertThat(tookMs).as("gave up after its deadline, not long after").isBetween(300L, 300L + 5_000L);
            assertThatThrownBy(() -> reader.readCommitted(accounts.refs, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
        }
    }

    @ParameterizedTest(name = "two-round commit: {0}")
    @ValueSource(booleans = {false, true})
    void readCommitted_documentsChangedOnlyByKnownTransactionsBetweenItsReads_returnsOneCut(boolean twoRound) throws Exception {
        // Before each of the first reads of the accounts another transfer of 10 from a0 to a1 commits
        // (and keeps its markers: its owner stops after the commit point). The documents change under
        // every read, but every change is a transaction the reader can see and judge: once they hold
        // still it returns one cut with every transfer committed before it. (A transaction that commits
        // between the reader's two reads of the states may have committed before or after the cut's
        // moment, which cannot be told: that attempt is repeated, so a writer that commits before
        // every read would keep it from ending.)
        Accounts accounts = new Accounts(2, 10_000L);
        TransactionManager writer = TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(accounts.db)
                .application("writer").twoRoundCommit(twoRound).crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                        throw new Stop();
                    }
                }).build();
        AtomicInteger transfers = new AtomicInteger();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBeforeEvery(accounts::isAccountsFind, () -> {
                if (transfers.get() >= 3) {
                    return;
                }
                assertThatThrownBy(() -> writer.run(List.of(
                        Operation.increment(accounts.refs.get(0), "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                        Operation.increment(accounts.refs.get(1), "balance", 10L, null)))).isInstanceOf(Stop.class);
                transfers.incrementAndGet();
            });
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(accounts.db)
                    .application("reader").build();

            List<Optional<Document>> views = reader.readCommitted(accounts.refs, Duration.ofSeconds(3));
            proxy.stopEvery();

            int committed = transfers.get();
            assertThat(committed).as("transfers committed while it read").isEqualTo(3);
            assertThat(views.get(0).orElseThrow().get("balance")).isEqualTo(10_000L - 10L * committed);
            assertThat(views.get(1).orElseThrow().get("balance")).isEqualTo(10_000L + 10L * committed);
        } finally {
            mongo.expireLeases(accounts.db);
            writer.recover(Duration.ZERO);
        }
    }

    @ParameterizedTest(name = "two-round commit: {0}")
    @ValueSource(booleans = {false, true})
    void readCommitted_whileWritersMoveMoney_everyViewConservesTheTotal(boolean twoRound) throws Exception {
        int n = 6;
        // Amounts are whole units plus a random fraction of a unit (UNIT = 2^20), so changes by
        // different transfers practically never cancel out on a document between its two reads
        // (that case, which the documents' versions catch, ReviewFindingsTest sets up on purpose);
        // any way a view loses money is a bug it catches.
        // Under the two-round commit, small balances: guards often meet credits not committed yet.
        long balance = (twoRound ? 60L : 1_000L) * UNIT;
        Accounts accounts = new Accounts(n, balance);
        mongo.invariants().expectTotal(accounts.db, balance * n);
        TransactionManager tm = TransactionManager.builder().finishInBackground(false).target("default", mongo.client()).database(accounts.db)
                .application("load").twoRoundCommit(twoRound).build();
        AtomicBoolean running = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        AtomicInteger reads = new AtomicInteger();
        AtomicInteger transfers = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 6; w++) {
            SplittableRandom random = new SplittableRandom(w);
            threads.add(new Thread(() -> {
                while (running.get()) {
                    int from = random.nextInt(n);
                    int to = (from + 1 + random.nextInt(n - 1)) % n;
                    long amount = (1 + random.nextInt(50)) * UNIT + random.nextLong(UNIT);
                    try {
                        tm.run(List.of(
                                Operation.increment(accounts.refs.get(from), "balance", -amount,
                                        new Document("balance", new Document("$gte", amount))),
                                Operation.increment(accounts.refs.get(to), "balance", amount, null)));
                        transfers.incrementAndGet();
                    } catch (RuntimeException e) {
                        problems.add("writer: " + e);
                    }
                }
            }));
        }
        for (int r = 0; r < 2; r++) {
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient())
                    .database(accounts.db).application("reader" + r).build();
            threads.add(new Thread(() -> {
                while (running.get()) {
                    try {
                        List<Optional<Document>> views = reader.readCommitted(accounts.refs);
                        // (A balance may read below zero for a moment: a debit may rely on a credit
                        // whose transaction has applied everything but not yet committed. The total
                        // cannot: every transfer is seen whole or not at all.)
                        long total = 0;
                        for (Optional<Document> view : views) {
                            long value = (Long) view.orElseThrow().get("balance");
                            total += value;
                            if (twoRound && value < 0) {
                                problems.add("a committed view below zero under the two-round commit: " + views);
                            }
                        }
                        if (twoRound && (Long) reader.readCommitted(accounts.refs.get(0)).orElseThrow().get("balance") < 0) {
                            problems.add("a committed view of one document below zero under the two-round commit");
                        }
                        if (total != balance * n) {
                            problems.add("a view that is not one cut: total " + total + " in " + views);
                        }
                        reads.incrementAndGet();
                    } catch (RuntimeException e) {
                        problems.add("reader: " + e);
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        Thread.sleep(4_000);
        running.set(false);
        for (Thread t : threads) {
            t.join(30_000);
        }

        assertThat(problems).isEmpty();
        assertThat(transfers.get()).as("transfers").isGreaterThan(50);
        assertThat(reads.get()).as("reads").isGreaterThan(10);
    }

    @Test
    void readCommitted_updateTakenButNotYetChangedByACommittingTransaction_isNotShownHalfDone() throws Exception {
        // Regression (CycleTest, while rewriting the reader): an update takes its document (lock) in
        // one write and changes it in a second. A cut read both times between the two and then found
        // the transaction committed (its state is read after the documents): it showed the credit of
        // the transaction on one document and the update's document unchanged.
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertOne(
                new Document("_id", "Y").append("balance", 100L).append("pendingTransactions", List.of()));
        mongo.client().getDatabase(db).getCollection("orders").insertOne(new Document("_id", "X").append("state", "UnPaid"));
        DocumentRef y = DocumentRef.of(db, "accounts", "Y");
        DocumentRef x = DocumentRef.of(db, "orders", "X");
        java.util.concurrent.CountDownLatch taken = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try (FaultProxy writerProxy = new FaultProxy(mongo.uri());
             MongoClient writerClient = writerProxy.newClient();
             FaultProxy readerProxy = new FaultProxy(mongo.uri());
             MongoClient readerClient = readerProxy.newClient()) {
            // the writer's second write of the update (the change, with its before-image) waits
            writerProxy.runBefore(request -> request.contains("orders") && request.contains("_m2pc.undo"), () -> {
                taken.countDown();
                await(release);
            });
            TransactionManager writer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", writerClient).database(db)
                    .application("writer").build();
            java.util.concurrent.CompletableFuture<TransactionOutcome> running = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> writer.run(List.of(Operation.increment(y, "balance", 10L, null),
                            Operation.update(x, new Document("$set", new Document("state", "Paid")), null))));
            assertThat(taken.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("X taken, Y credited").isTrue();
            // when the reader asks for the states (after reading both documents twice), the writer
            // finishes its update and commits
            readerProxy.runBefore(request -> request.contains("find") && request.contains("transactions")
                    && !request.contains("transactions_clock"), () -> {
                release.countDown();
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
                while (mongo.client().getDatabase(db).getCollection("transactions")
                        .countDocuments(new Document("state", new Document("$in", List.of("applied", "done")))) == 0
                        && System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            });
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", readerClient).database(db)
                    .application("reader").build();

            List<Optional<Document>> views = reader.readCommitted(List.of(y, x));

            assertThat(running.get(10, java.util.concurrent.TimeUnit.SECONDS).state()).isEqualTo(TransactionState.DONE);
            boolean credited = views.get(0).orElseThrow().get("balance").equals(110L);
            boolean paid = views.get(1).orElseThrow().get("state").equals("Paid");
            assertThat(paid).as("order paid in the cut %s", views).isEqualTo(credited);
        }
    }

    private static void await(java.util.concurrent.CountDownLatch latch) {
        try {
            latch.await(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void readCommitted_transactionAppliedAndReleasedBetweenTheTwoReadsOfADocument_isNotShownOnItAlone() throws Exception {
        // Two collections, so each read of the cut is two requests: X first, then Y. A transfer from
        // Y to X debits Y after the first read of Y, then (after the second read of X) credits X,
        // commits and releases both before the second read of Y. No read ever shows its marker: only
        // Y's change between its two reads, which no named transaction explains, tells the reader.
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("x").insertOne(new Document("_id", "j").append("balance", 0L)
                .append("pendingTransactions", List.of()));
        mongo.client().getDatabase(db).getCollection("y").insertOne(new Document("_id", "i").append("balance", 100L)
                .append("pendingTransactions", List.of()));
        DocumentRef x = DocumentRef.of(db, "x", "j");
        DocumentRef y = DocumentRef.of(db, "y", "i");
        java.util.concurrent.CountDownLatch debited = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        TransactionManager writer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("writer").crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && go.getCount() == 1) {
                        debited.countDown();
                        await(go);
                    }
                }).build();
        AtomicInteger finds = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CompletableFuture<TransactionOutcome>> running =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBeforeEvery(request -> request.contains("find") && !request.contains("transactions"), () -> {
                int n = finds.incrementAndGet();
                if (n == 3) { // the second read of X: the transfer has debited Y
                    running.set(java.util.concurrent.CompletableFuture.supplyAsync(() -> writer.run(List.of(
                            Operation.increment(y, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                            Operation.increment(x, "balance", 10L, null)))));
                    await(debited);
                } else if (n == 4) { // the second read of Y: the transfer is done
                    go.countDown();
                    running.get().join();
                }
            });
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("reader").build();

            List<Optional<Document>> views = reader.readCommitted(List.of(x, y));

            assertThat(finds.get()).as("the reads of the cut").isGreaterThanOrEqualTo(4);
            assertThat(running.get().join().state()).isEqualTo(TransactionState.DONE);
            long total = (Long) views.get(0).orElseThrow().get("balance") + (Long) views.get(1).orElseThrow().get("balance");
            assertThat(total).as("the transfer seen whole or not at all: %s", views).isEqualTo(100L);
        }
    }

    @Test
    void readCommitted_uncommittedIncrementOfAnEmbeddedField_isNotShown() {
        // Regression (found while rewriting the reader): increments were taken back by top-level
        // field name only, so an uncommitted increment of "totals.eur" was shown as committed.
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("ledgers").insertOne(new Document("_id", "L")
                .append("totals", new Document("eur", 100L)).append("pendingTransactions", List.of()));
        DocumentRef ledger = DocumentRef.of(db, "ledgers", "L");
        AtomicBoolean stop = new AtomicBoolean(true);
        TransactionManager writer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("writer").crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && stop.getAndSet(false)) {
                        throw new Stop();
                    }
                }).build();
        assertThatThrownBy(() -> writer.run(List.of(Operation.increment(ledger, "totals.eur", 25L, null))))
                .isInstanceOf(Stop.class);

        Document single = writer.readCommitted(ledger).orElseThrow();
        Document inCut = writer.readCommitted(List.of(ledger)).get(0).orElseThrow();

        assertThat(single.get("totals", Document.class).get("eur")).as("read alone").isEqualTo(100L);
        assertThat(inCut.get("totals", Document.class).get("eur")).as("read in a cut").isEqualTo(100L);
        mongo.expireLeases(db);
        writer.recover(Duration.ZERO);
        assertThat(writer.readCommitted(ledger).orElseThrow().get("totals", Document.class).get("eur")).isEqualTo(125L);
    }

    /** {@code n} accounts a0..a(n-1) with {@code balance} each, in a database of the test's own. */
    private static final class Accounts {
        final String db = mongo.database();
        final MongoCollection<Document> coll = mongo.client().getDatabase(db).getCollection("accounts");
        final List<DocumentRef> refs = new ArrayList<>();

        Accounts(int n, long balance) {
            for (int i = 0; i < n; i++) {
                coll.insertOne(new Document("_id", "a" + i).append("balance", balance).append("pendingTransactions", List.of()));
                refs.add(DocumentRef.of(db, "accounts", "a" + i));
            }
        }

        boolean isAccountsFind(String request) {
            return request.contains("find") && request.contains("accounts") && !request.contains("transactions");
        }
    }
}
