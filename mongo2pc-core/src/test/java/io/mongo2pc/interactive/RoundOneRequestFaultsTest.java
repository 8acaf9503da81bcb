package io.mongo2pc.interactive;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.TransactionState;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/** Faults of round 1's one request for the takes of one collection (review). */
class RoundOneRequestFaultsTest {
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SKEW = Duration.ofMillis(100);

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    /** The one request with both optimistic takes (A and B as read). */
    private static final Predicate<String> BOTH_TAKES = text -> text.contains("accounts") && text.contains("pendingTransactions.0")
            && text.contains("_m2pc_v") && !text.contains("_m2pc.undo") && text.contains("\u0000A\u0000") && text.contains("\u0000B\u0000");

    @BeforeEach
    void setUp() {
        accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertMany(List.of(new Document("_id", "A").append("balance", 100L), new Document("_id", "B").append("balance", 0L)));
        a = DocumentRef.of(mongo.database(), "accounts", "A");
        b = DocumentRef.of(mongo.database(), "accounts", "B");
    }

    private TransactionManager manager(MongoClient client, String app) {
        return TestManagers.crashing(client, mongo.database(), app, (p, id) -> { }).lease(LEASE).maxClockSkew(SKEW)
                .finishInBackground(false).build();
    }

    private TransactionResult<Boolean> transfer(TransactionManager tm, long amount, Long bOverride) {
        return tm.transact(ctx -> {
            List<Optional<Document>> both = ctx.getAll(List.of(a, b));
            long from = both.get(0).orElseThrow().getLong("balance");
            long to = both.get(1).orElseThrow().getLong("balance");
            ctx.update(a, new Document("$set", new Document("balance", from - amount)));
            ctx.update(b, bOverride != null ? new Document("$set", new Document("balance", to + amount).append("code", "a"))
                    : new Document("$set", new Document("balance", to + amount)));
            return true;
        });
    }

    private void credit(TransactionManager other, long amount) {
        other.transact(o -> {
            long balance = o.get(b).orElseThrow().getLong("balance");
            o.update(b, new Document("$set", new Document("balance", balance + amount)));
            return null;
        });
    }

    private long balance(String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    @Test
    void transfer_ackOfTheTakesLost_commitsOnce() throws Exception {
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            proxy.dropReplies(1, BOTH_TAKES);
            TransactionResult<Boolean> result = transfer(manager(viaProxy, "lost"), 30L, null);
            assertThat(proxy.dropped.get()).isEqualTo(1);
            assertThat(result.outcome().state()).isEqualTo(TransactionState.DONE);
        }
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(30L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void transfer_oneTakeMisses_andTheAckIsLost_theOtherIsUndone_andTheNextAttemptCommits() throws Exception {
        TransactionManager other = TestManagers.builder(mongo.client(), mongo.database(), "other").finishInBackground(false).build();
        try (other; FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            proxy.runBefore(BOTH_TAKES, () -> credit(other, 5L));
            proxy.dropReplies(1, BOTH_TAKES);
            TransactionResult<Boolean> result = transfer(manager(viaProxy, "partial"), 30L, null);
            assertThat(proxy.dropped.get()).isEqualTo(1);
            assertThat(result.outcome().state()).isEqualTo(TransactionState.DONE);
            assertThat(result.attempts()).isGreaterThan(1);
        }
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(35L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 105L);
    }

    @Test
    void transfer_destinationTakeRefusedByAUniqueIndex_sourceTakeOfTheSameRequestUndone_canceled() {
        accounts.updateOne(new Document("_id", "A"), new Document("$set", new Document("code", "a")));
        accounts.updateOne(new Document("_id", "B"), new Document("$set", new Document("code", "b")));
        accounts.createIndex(new Document("code", 1), new com.mongodb.client.model.IndexOptions().unique(true));
        TransactionResult<Boolean> result = transfer(manager(mongo.client(), "refused"), 30L, -1L);
        assertThat(result.outcome().state()).isEqualTo(TransactionState.CANCELED);
        assertThat(balance("A")).isEqualTo(100L);
        assertThat(balance("B")).isEqualTo(0L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void transfer_takesHeldInTheNetwork_lateCopyLandsAfterTheAttemptWasUndone_andChangesNothing() throws Exception {
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS))
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            proxy.countAnswers(BOTH_TAKES);
            proxy.runBefore(BOTH_TAKES, () -> sleep(5 * LEASE.toMillis()));
            TransactionResult<Boolean> result = transfer(manager(viaProxy, "late"), 30L, null);
            assertThat(result.attempts()).isGreaterThan(1);
            assertThat(proxy.answered.get()).as("the held copy was still on its way").isZero();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (proxy.answered.get() < 1 && System.nanoTime() < deadline) {
                sleep(20);
            }
            assertThat(proxy.answered.get()).as("the late copy reached the server").isEqualTo(1);
        }
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(30L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void closeAccount_deleteAndCreditInOneRequest_destinationChangedAfterRead_deleteTakeUndone_nextAttemptCommits() {
        TransactionManager other = TestManagers.builder(mongo.client(), mongo.database(), "other").finishInBackground(false).build();
        java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
        try (other) {
            TransactionResult<Boolean> result = manager(mongo.client(), "close").transact(ctx -> {
                List<Optional<Document>> both = ctx.getAll(List.of(a, b));
                if (first.getAndSet(false)) {
                    credit(other, 5L);
                }
                ctx.delete(a);
                ctx.update(b, new Document("$set", new Document("balance",
                        both.get(1).orElseThrow().getLong("balance") + both.get(0).orElseThrow().getLong("balance"))));
                return true;
            });
            assertThat(result.outcome().state()).isEqualTo(TransactionState.DONE);
            assertThat(result.attempts()).isEqualTo(2);
        }
        assertThat(accounts.find(new Document("_id", "A")).first()).isNull();
        assertThat(balance("B")).isEqualTo(105L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 105L);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
