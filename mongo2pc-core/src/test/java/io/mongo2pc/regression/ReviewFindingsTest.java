package io.mongo2pc.regression;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Findings of a review of {@code readCommitted(List)} (internal/reads/ConsistentCut). Each test places
 * one interleaving exactly (a FaultProxy in front of the reader runs writers just before chosen
 * reads; a CrashHook stops or pauses a writer at a chosen write) and states what the guarantee
 * requires.
 */
class ReviewFindingsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Stop extends RuntimeException {
        Stop() {
            super("stopped by the test", null, false, false);
        }
    }

    /**
     * Three accounts in three collections (so each read of each is its own request), refs in the
     * order j, i, k. Z (k -> i, 5) commits after the first read of i; X (i -> j, 5) debits i
     * before the second read of j and credits j, commits and releases before the second read of
     * i. i reads 100 both times (+5 -5), j reads 100 both times, k reads 95 both times, no
     * markers anywhere: by the values every change is "explained", and the cut 100 + 100 + 95 would
     * show Z whole and X's debit without its credit, a sum no committed state ever had (the cut's
     * former limit). The version of i counts both commits: it moved by 2 with no release named, so
     * the cut reads again.
     */
    @Test
    void readCommitted_twoTransfersThatCancelOutOnOneAccountBetweenItsReads_areSeenByItsVersion() throws Exception {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        for (String name : List.of("i", "j", "k")) {
            database.getCollection(name + "acc").insertOne(new Document("_id", name).append("balance", 100L)
                    .append("pendingTransactions", List.of()));
        }
        DocumentRef i = DocumentRef.of(db, "iacc", "i");
        DocumentRef j = DocumentRef.of(db, "jacc", "j");
        DocumentRef k = DocumentRef.of(db, "kacc", "k");
        CountDownLatch xPaused = new CountDownLatch(1);
        CountDownLatch xGo = new CountDownLatch(1);
        AtomicBoolean pauseX = new AtomicBoolean(false);
        TransactionManager writer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("writer").crashHook((p, id) -> {
                    if (p.equals(CrashPoint.before(CrashPoint.Step.APPLY, 1)) && pauseX.getAndSet(false)) {
                        xPaused.countDown();
                        await(xGo);
                    }
                }).build();
        Map<String, AtomicInteger> reads = new ConcurrentHashMap<>();
        AtomicReferenceOf<CompletableFuture<TransactionOutcome>> x = new AtomicReferenceOf<>();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBeforeEvery(ReviewFindingsTest::isAccountFind, new Runnable() {
                @Override
                public void run() {
                    // which collection this request reads is told by the order of the requests
                    int n = reads.computeIfAbsent("all", s -> new AtomicInteger()).incrementAndGet();
                    if (n == 3) { // first read of k: Z, k -> i 5, commits and releases
                        writer.run(List.of(
                                Operation.increment(k, "balance", -5L, new Document("balance", new Document("$gte", 5L))),
                                Operation.increment(i, "balance", 5L, null)));
                    } else if (n == 4) { // second read of j: X, i -> j 5, has debited i only
                        pauseX.set(true);
                        x.value = CompletableFuture.supplyAsync(() -> writer.run(List.of(
                                Operation.increment(i, "balance", -5L, new Document("balance", new Document("$gte", 5L))),
                                Operation.increment(j, "balance", 5L, null))));
                        await(xPaused);
                    } else if (n == 5) { // second read of i: X credits j, commits and releases
                        xGo.countDown();
                        x.value.join();
                    }
                }
            });
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("reader").build();

            List<Optional<Document>> views = reader.readCommitted(List.of(j, i, k), Duration.ofSeconds(3));
            proxy.stopEvery();

            assertThat(x.value.get(10, TimeUnit.SECONDS).state()).isEqualTo(TransactionState.DONE);
            long total = 0;
            for (Optional<Document> view : views) {
                total += view.orElseThrow().getLong("balance");
            }
            assertThat(total).as("the total of the cut %s (no money entered or left)", views).isEqualTo(300L);
        }
    }

    /**
     * A transfer between two collections committed and released its debit; its owner stopped
     * before releasing the credit (the state stays applied until its lease runs out and someone
     * recovers it). Each account read alone is right; the two together are a plain committed
     * state (90, 110) that did not change. The cut never sees the committed transaction on the
     * released account (its marker is gone) and repeats until its deadline.
     */
    @Test
    void readCommitted_ofACommittedTransferStoppedBetweenItsReleases_returnsTheCommittedBalances() {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        database.getCollection("src").insertOne(new Document("_id", "a").append("balance", 100L).append("pendingTransactions", List.of()));
        database.getCollection("dst").insertOne(new Document("_id", "b").append("balance", 100L).append("pendingTransactions", List.of()));
        DocumentRef a = DocumentRef.of(db, "src", "a");
        DocumentRef b = DocumentRef.of(db, "dst", "b");
        TransactionManager writer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("writer").crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.RELEASE, 0))) {
                        throw new Stop();
                    }
                }).build();
        assertThatThrownBy(() -> writer.run(List.of(
                Operation.increment(a, "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(b, "balance", 10L, null)))).isInstanceOf(Stop.class);
        TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(db)
                .application("reader").build();
        try {
            assertThat(reader.readCommitted(a).orElseThrow().get("balance")).as("a alone").isEqualTo(90L);
            assertThat(reader.readCommitted(b).orElseThrow().get("balance")).as("b alone").isEqualTo(110L);

            Throwable thrown = catchThrowable(() -> {
                List<Optional<Document>> views = reader.readCommitted(List.of(a, b), Duration.ofSeconds(2));
                assertThat(views.get(0).orElseThrow().get("balance")).isEqualTo(90L);
                assertThat(views.get(1).orElseThrow().get("balance")).isEqualTo(110L);
            });
            assertThat(thrown).as("a cut of documents nobody is changing").isNull();
        } finally {
            mongo.expireLeases(db);
            reader.recover(Duration.ZERO);
        }
    }

    /**
     * The tutorial's own transfer document ({source, destination, value}, no ops, the older
     * spelling "committed", no lease) left by an application that stopped after releasing the
     * source: nothing recovers it until an operator runs recovery, and until then no cut of the
     * two accounts can be read at all.
     */
    @Test
    void readCommitted_ofATutorialTransferCommittedWithTheSourceReleased_returnsTheCommittedBalances() {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        ObjectId t = new ObjectId();
        database.getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 90L).append("pendingTransactions", List.of()));
        database.getCollection("accounts").insertOne(new Document("_id", "B").append("balance", 110L).append("pendingTransactions", List.of(t)));
        database.getCollection("transactions").insertOne(new Document("_id", t).append("source", "A").append("destination", "B")
                .append("value", 10L).append("state", "committed").append("lastModified", new Date()));
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("reader").codec(ReviewFindingsTest::tutorialTransfer).build();
        try {
            Throwable thrown = catchThrowable(() -> {
                List<Optional<Document>> views = reader.readCommitted(List.of(a, b), Duration.ofSeconds(1));
                assertThat(views.get(0).orElseThrow().get("balance")).isEqualTo(90L);
                assertThat(views.get(1).orElseThrow().get("balance")).isEqualTo(110L);
            });
            assertThat(thrown).as("a cut of a committed tutorial transfer nobody is changing").isNull();
        } finally {
            reader.recover(Duration.ZERO);
        }
    }

    /**
     * A committed transaction whose operations this manager cannot read (a tutorial transfer and
     * no codec for it): a committed transaction needs no operations to be read (its effect is
     * simply in), and readCommitted of one document says so; the cut asks for its operations
     * anyway and fails with an IllegalStateException.
     */
    @Test
    void readCommitted_ofDocumentsNamingACommittedTransactionWithoutReadableOperations_readsThemAsTheSingleReadDoes() {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        ObjectId t = new ObjectId();
        database.getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 90L).append("pendingTransactions", List.of(t)));
        database.getCollection("accounts").insertOne(new Document("_id", "B").append("balance", 110L).append("pendingTransactions", List.of(t)));
        database.getCollection("transactions").insertOne(new Document("_id", t).append("source", "A").append("destination", "B")
                .append("value", 10L).append("state", "applied").append("lastModified", new Date()));
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(db)
                .application("reader").build();
        try {
            assertThat(reader.readCommitted(a).orElseThrow().get("balance")).as("A alone").isEqualTo(90L);
            Throwable thrown = catchThrowable(() -> {
                List<Optional<Document>> views = reader.readCommitted(List.of(a, b), Duration.ofSeconds(1));
                assertThat(views.get(0).orElseThrow().get("balance")).isEqualTo(90L);
                assertThat(views.get(1).orElseThrow().get("balance")).isEqualTo(110L);
            });
            assertThat(thrown).as("the cut of A and B").isNull();
        } finally {
            // finish it by hand, as the tutorial application would
            database.getCollection("accounts").updateMany(new Document(), Updates.pull("pendingTransactions", t));
            database.getCollection("transactions").updateOne(Filters.eq("_id", t), Updates.set("state", "done"));
        }
    }

    /**
     * What a caller learns when the cut gives up: which of its documents kept changing. The
     * message names only how many documents there were, and the exception no transaction.
     */
    @Test
    void readCommitted_givingUpAtItsDeadline_namesTheDocumentThatKeptChanging() throws Exception {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        for (String id : List.of("quiet", "busy")) {
            database.getCollection("accounts").insertOne(new Document("_id", id).append("balance", 100L)
                    .append("pendingTransactions", List.of()));
        }
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            proxy.runBeforeEvery(ReviewFindingsTest::isAccountFind, () -> database.getCollection("accounts")
                    .updateOne(Filters.eq("_id", "busy"), Updates.inc("visits", 1)));
            TransactionManager reader = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("reader").build();
            Throwable thrown = catchThrowable(() -> reader.readCommitted(
                    List.of(DocumentRef.of(db, "accounts", "quiet"), DocumentRef.of(db, "accounts", "busy")), Duration.ofMillis(300)));
            proxy.stopEvery();

            assertThat(thrown).isExactlyInstanceOf(TransactionException.class).hasMessageContaining("busy");
        }
    }

    /**
     * LateInsertCopyTest's ghost again, with the driver's client-side operation timeout instead of
     * a socket timeout: the failed insert is not taken for in doubt, so it is not noted, and
     * recovery leaves what its late copy created.
     */
    @Test
    void lateCopyOfAnInsert_lostToAClientSideOperationTimeout_isRemovedByRecovery() throws Exception {
        String db = mongo.database();
        MongoDatabase database = mongo.client().getDatabase(db);
        database.getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 10L).append("pendingTransactions", List.of()));
        DocumentRef ghost = DocumentRef.of(db, "items", "ghost");
        AtomicInteger held = new AtomicInteger();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .timeout(300, TimeUnit.MILLISECONDS)
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            TransactionManager owner = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", viaProxy).database(db)
                    .application("owner").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                    .retryTimeout(Duration.ofSeconds(10)).build();
            proxy.runBefore(request -> request.contains("findAndModify") && request.contains("items"), () -> {
                held.incrementAndGet();
                sleep(3_000);
            });
            TransactionOutcome outcome = owner.run(List.of(
                    Operation.insert(ghost, new Document("v", 0L)),
                    Operation.increment(DocumentRef.of(db, "accounts", "A"), "balance", 1L,
                            new Document("balance", new Document("$gte", 1_000_000L)))));
            assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (database.getCollection("items").find(Filters.eq("_id", "ghost")).first() == null && System.nanoTime() < until) {
                Thread.sleep(50);
            }
        }
        assertThat(held).hasValue(1);
        TransactionManager other = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(db)
                .application("recoverer").build();
        other.recover();

        assertThat(database.getCollection("items").find(Filters.eq("_id", "ghost")).first())
                .as("what the late copy created, after recovery").isNull();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The tutorial's transfer {source, destination, value} as two increments of accounts.balance. */
    private static Optional<List<Operation>> tutorialTransfer(Document tx, String database) {
        if (!tx.containsKey("source")) {
            return Optional.empty();
        }
        long value = ((Number) tx.get("value")).longValue();
        return Optional.of(List.of(
                Operation.increment(DocumentRef.of(database, "accounts", tx.get("source")), "balance", -value,
                        new Document("balance", new Document("$gte", value))),
                Operation.increment(DocumentRef.of(database, "accounts", tx.get("destination")), "balance", value, null)));
    }

    private static boolean isAccountFind(String request) {
        return request.contains("find") && request.contains("acc") && !request.contains("transactions");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class AtomicReferenceOf<T> {
        volatile T value;
    }
}
