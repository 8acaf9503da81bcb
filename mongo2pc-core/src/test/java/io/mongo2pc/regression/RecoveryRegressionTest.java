package io.mongo2pc.regression;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.CancelResult;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.embedded.EmbeddedServer;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Regression tests for bugs found in recovery, each named after what broke. */
class RecoveryRegressionTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash() {
            super("injected crash");
        }
    }

    TransactionManager recoverer;

    @BeforeEach
    void setUp() {
        recoverer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                .application("recoverer").lease(Duration.ofMillis(100)).build();
        mongo.client().getDatabase(mongo.database()).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", 1000L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 1000L).append("pendingTransactions", List.of())));
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    private List<Operation> transfer(long amount) {
        return List.of(
                Operation.increment(DocumentRef.of(mongo.database(), "accounts", "A"), "balance", -amount,
                        new Document("balance", new Document("$gte", amount))),
                Operation.increment(DocumentRef.of(mongo.database(), "accounts", "B"), "balance", amount, null));
    }

    private TransactionManager crashingAt(CrashPoint point) {
        AtomicBoolean armed = new AtomicBoolean(true);
        return TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application("owner").lease(Duration.ofMillis(100))
                .crashHook((reached, id) -> {
                    if (reached.equals(point) && armed.compareAndSet(true, false)) {
                        throw new Crash();
                    }
                }).build();
    }

    private long balance(String id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .find(new Document("_id", id)).first().getLong("balance");
    }

    /**
     * The embedded server keeps {@code $currentDate} at sub-millisecond precision but returns it
     * in milliseconds, so the takeover's equality filter on the lastModified it had read never
     * matched: no transaction stamped by mongo2pc itself could ever be recovered or canceled.
     */
    @Test
    void recover_oneTransactionWhoseTargetIsDown_doesNotKeepTheOthersFromBeingRecovered() {
        // Regression: the first transaction that failed ended the whole pass, and the next pass met
        // it first again, so one transaction on a server that was down blocked every recovery.
        EmbeddedServer shop = EmbeddedServer.inMemory().start();
        String shopUri = shop.uri();
        DocumentRef order = new DocumentRef("shop", mongo.database(), "orders", "o1");
        try (MongoClient shopClient = MongoClients.create(shopUri)) {
            shopClient.getDatabase(mongo.database()).getCollection("orders").insertOne(new Document("_id", "o1").append("n", 0));
            AtomicBoolean armed = new AtomicBoolean(true);
            TransactionManager owner = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).target("shop", shopClient)
                    .database(mongo.database()).application("owner").lease(Duration.ofMillis(100))
                    .crashHook((reached, id) -> {
                        if (reached.equals(CrashPoint.after(Step.APPLY, 0)) && armed.getAndSet(false)) {
                            throw new Crash();
                        }
                    }).build();
            // the oldest stale transaction touches the shop server, the next one only default
            assertThatThrownBy(() -> owner.run(List.of(Operation.increment(order, "n", 1L, null),
                    Operation.increment(DocumentRef.of(mongo.database(), "accounts", "A"), "balance", -5L, null))))
                    .isInstanceOf(Crash.class);
            armed.set(true);
            assertThatThrownBy(() -> owner.run(transfer(10))).isInstanceOf(Crash.class);
        }
        shop.close(); // the shop server goes down
        try (MongoClient deadShop = MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(shopUri))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(200, TimeUnit.MILLISECONDS)).build())) {
            TransactionManager recovering = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).target("shop", deadShop)
                    .database(mongo.database()).application("recoverer").retryTimeout(Duration.ofMillis(500)).build();
            mongo.expireLeases(mongo.database());

            RecoveryReport report = recovering.recover(Duration.ZERO);

            assertThat(report.skipped()).as("the transaction on the server that is down").isEqualTo(1);
            assertThat(report.failed()).as("it failed, it is not just waiting").isEqualTo(1);
            assertThat(report.notStale()).isEmpty();
            assertThat(report.rolledForward()).as("the transfer behind it").isEqualTo(1);
        }
        assertThat(balance("A")).as("the transfer rolled forward; the other debit of A never applied").isEqualTo(990L);
        assertThat(balance("B")).isEqualTo(1010L);
        mongo.skipInvariants("one transaction stays open: its server is down for good in this test");
    }

    @Test
    void recover_transactionsWhoseOwnersLeaseRunsOnOrThatCannotBeRead_areToldApartFromEachOther() {
        // Both used to be counted as "skipped" alike: a program could not tell "wait" from "broken".
        TransactionManager longLease = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application("owner").lease(Duration.ofSeconds(30)).crashHook((reached, id) -> {
                    if (reached.equals(CrashPoint.after(Step.APPLY, 0))) {
                        throw new Crash();
                    }
                }).build();
        assertThatThrownBy(() -> longLease.run(transfer(10))).isInstanceOf(Crash.class);
        Document live = mongo.transactions(recoverer.settings().database()).find().first();
        mongo.transactions(recoverer.settings().database()).insertOne(new Document("_id", "unreadable").append("state", "pending")
                .append("lastModified", new java.util.Date(0)));

        RecoveryReport report = recoverer.recover(Duration.ZERO);

        assertThat(report.notStale()).hasSize(1);
        assertThat(report.notStale().get(0).id()).isEqualTo(live.get("_id"));
        assertThat(report.notStale().get(0).leaseEnds()).isEqualTo(live.getDate("lastModified").toInstant().plusSeconds(30));
        assertThat(report.failed()).as("the transaction without operations").isEqualTo(1);
        assertThat(report.skipped()).isEqualTo(2);
        assertThat(report.finished()).isZero();
        mongo.transactions(recoverer.settings().database()).deleteOne(new Document("_id", "unreadable"));
        mongo.expireLeases(mongo.database());
        assertThat(recoverer.recover(Duration.ZERO).rolledForward()).isEqualTo(1);
    }

    @Test
    void takeover_lastModifiedStampedByServerWithSubMillisecondPrecision_stillMatches() throws Exception {
        // given: an owner stamped lastModified with $currentDate, then died after the first apply
        assertThatThrownBy(() -> crashingAt(CrashPoint.after(Step.APPLY, 0)).run(transfer(100))).isInstanceOf(Crash.class);
        Thread.sleep(200);

        // when
        RecoveryReport report = recoverer.recover();

        // then
        assertThat(report.rolledForward()).isEqualTo(1);
        assertThat(report.skipped()).isZero();
        assertThat(balance("A")).isEqualTo(900L);
        assertThat(balance("B")).isEqualTo(1100L);
    }

    @Test
    void cancel_ofStalePendingStampedByServer_succeeds() throws Exception {
        assertThatThrownBy(() -> crashingAt(CrashPoint.after(Step.APPLY, 0)).run(transfer(100))).isInstanceOf(Crash.class);
        Object id = mongo.transactions(recoverer.settings().database()).find().first().get("_id");
        Thread.sleep(200);

        CancelResult result = recoverer.cancel(id, "operator");

        assertThat(result.kind()).isEqualTo(CancelResult.Kind.CANCELED);
        assertThat(result.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(result.reasonCode()).isEqualTo(ReasonCode.CANCELED_BY_OPERATOR);
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).isEqualTo(1000L);
    }

    /**
     * The same sub-millisecond stamps made recover(ZERO) miss a transaction stamped in the very
     * millisecond the server's clock was read: "lastModified <= now" is false for 12:00:00.269700
     * against a now returned as 12:00:00.269.
     */
    @Test
    void recoverWithZeroThreshold_findsTransactionStampedInTheSameMillisecond() {
        // A transaction written by hand (no owner, no lease of its own), stamped by the server's
        // $currentDate, then recovered at once: only the recoverer's threshold (zero) applies.
        var transactions = mongo.client().getDatabase(mongo.database()).getCollection("transactions");
        for (int i = 0; i < 100; i++) {
            transactions.updateOne(new Document("_id", "hand-" + i),
                    new Document("$setOnInsert", new Document("state", "pending").append("ops", List.of(
                            new Document("op", "inc").append("target", "default").append("db", mongo.database())
                                    .append("coll", "accounts").append("id", "A").append("inc", new Document("balance", -1L))
                                    .append("guard", new Document("balance", new Document("$gte", 1L))),
                            new Document("op", "inc").append("target", "default").append("db", mongo.database())
                                    .append("coll", "accounts").append("id", "B").append("inc", new Document("balance", 1L)))))
                            .append("$currentDate", new Document("lastModified", true)),
                    new com.mongodb.client.model.UpdateOptions().upsert(true));

            RecoveryReport report = recoverer.recover(Duration.ZERO);

            assertThat(report.rolledForward()).as("round %s", i).isEqualTo(1);
        }
        assertThat(balance("A")).isEqualTo(900L);
    }

    /** The same for prune(ZERO): a transaction finished in the millisecond the clock was read was kept. */
    @Test
    void pruneWithZeroThreshold_deletesTransactionFinishedInTheSameMillisecond() {
        TransactionManager manager = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database()).build();
        for (int i = 0; i < 100; i++) {
            manager.run(transfer(1));

            assertThat(manager.prune(Duration.ZERO, PruneOptions.builder().force(true).build()).pruned()).as("round %s", i).isEqualTo(1);
        }
        assertThat(balance("A")).isEqualTo(900L);
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }
}
