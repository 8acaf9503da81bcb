package io.mongo2pc.interactive;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.CommandsTo;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Round 1 of an interactive transfer (both accounts read, both written): the two takes go in one
 * request, each its own write; when one of them no longer matches (its account changed since it
 * was read), the other is still known to be in effect and is undone, and the next attempt commits.
 */
class RoundOneRequestsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** Per update request to accounts: how many of its statements take a document (set the library's lock). */
    private final List<Integer> takeRequests = new CopyOnWriteArrayList<>();
    private MongoClient counted;
    private TransactionManager tm;
    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    @BeforeEach
    void setUp() {
        accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertMany(List.of(new Document("_id", "A").append("balance", 100L), new Document("_id", "B").append("balance", 0L)));
        a = DocumentRef.of(mongo.database(), "accounts", "A");
        b = DocumentRef.of(mongo.database(), "accounts", "B");
        counted = countingClient();
        tm = TestManagers.builder(counted, mongo.database(), "interactive").finishInBackground(false).build();
    }

    @AfterEach
    void close() {
        tm.close();
        counted.close();
    }

    @Test
    void transfer_bothAccountsWritten_takesBothInOneRequest() {
        // Given two accounts
        // When a transfer reads both and writes both
        TransactionResult<Boolean> result = tm.transact(ctx -> transfer(ctx, 30L, null));

        // Then it committed in one attempt, both takes in one request, and the balances moved
        assertThat(result.outcome().isCommitted()).isTrue();
        assertThat(result.attempts()).isEqualTo(1);
        assertThat(takeRequests).as("take statements per update request").containsExactly(2);
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(30L);
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }

    @Test
    void transfer_destinationChangedAfterItsRead_firstAttemptUndoneAndTheNextCommits() {
        // Given two accounts, and another transaction that credits B after the first attempt read it
        TransactionManager other = TestManagers.builder(mongo.client(), mongo.database(), "other").finishInBackground(false).build();
        try (other) {
            // When the transfer writes both in one request, B's take no longer matching
            TransactionResult<Boolean> result = tm.transact(ctx -> transfer(ctx, 30L, () -> other.transact(o -> {
                long balance = o.get(b).orElseThrow().getLong("balance");
                o.update(b, new Document("$set", new Document("balance", balance + 5L)));
                return null;
            })));

            // Then the first attempt's take of A was known in effect and undone, and the second attempt committed
            assertThat(result.outcome().isCommitted()).isTrue();
            assertThat(result.attempts()).isEqualTo(2);
            // (the second attempt, pessimistic, takes each document as it reads it: no take as read)
            assertThat(takeRequests).as("take statements per update request: both at once, then none sent again (their"
                    + " documents read back: A taken by this attempt, B changed)").containsExactly(2);
        }
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(35L);
        assertThat(accounts.find(new Document("_id", "A")).first()).doesNotContainKey("_m2pc");
        mongo.invariants().expectTotal(mongo.database(), 105L);
    }

    @Test
    void transfer_destinationTakenByAnotherTransaction_heldNotOurs_sourceUndone_nextAttemptCommits() throws Exception {
        // Given another transaction, crediting B, that has taken B (its round 1 done) and waits before its commit
        CountDownLatch goOn = new CountDownLatch(1);
        TransactionManager other = TestManagers.crashing(mongo.client(), mongo.database(), "other", (p, id) -> {
            if (p.equals(CrashPoint.after(Step.APPLY, 0))) {
                await(goOn);
            }
        }).finishInBackground(false).build();
        // (the transfer lets it go on once it undoes its first attempt)
        TransactionManager transfers = TestManagers.crashing(counted, mongo.database(), "transfers", (p, id) -> {
            if (p.step() == Step.UNDO) {
                goOn.countDown();
            }
        }).finishInBackground(false).build();
        try (other; transfers) {
            CompletableFuture<Object> credit = CompletableFuture.supplyAsync(() -> other.transact(o -> {
                long balance = o.get(b).orElseThrow().getLong("balance");
                o.update(b, new Document("$set", new Document("balance", balance + 5L)));
                return null;
            }).value());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (accounts.find(new Document("_id", "B").append("_m2pc", new Document("$exists", true))).first() == null
                    && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertThat(accounts.find(new Document("_id", "B")).first()).as("B taken by the other transaction").containsKey("_m2pc");

            // When the transfer writes both in one request, B's take meeting the other's lock
            TransactionResult<Boolean> result;
            try {
                result = transfers.transact(ctx -> transfer(ctx, 30L, null));
            } finally {
                goOn.countDown();
            }
            credit.get(30, TimeUnit.SECONDS);

            // Then B was held, not ours: the first attempt's take of A was undone, a later attempt committed (the
            // second, or the third when the other's release of B came after the second took A: it is older, so that one gives way)
            assertThat(result.outcome().isCommitted()).isTrue();
            assertThat(result.attempts()).isBetween(2, 3);
            assertThat(takeRequests).as("take statements per update request: both at once, none sent again").containsExactly(2);
        }
        assertThat(balance("A")).isEqualTo(70L);
        assertThat(balance("B")).isEqualTo(35L);
        assertThat(accounts.find(new Document("_m2pc", new Document("$exists", true))).first()).isNull();
        mongo.invariants().expectTotal(mongo.database(), 105L);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Boolean transfer(io.mongo2pc.TransactionContext ctx, long amount, Runnable afterRead) {
        List<Optional<Document>> both = ctx.getAll(List.of(a, b));
        long from = both.get(0).orElseThrow().getLong("balance");
        long to = both.get(1).orElseThrow().getLong("balance");
        if (afterRead != null && takeRequests.isEmpty()) {
            afterRead.run();
        }
        ctx.update(a, new Document("$set", new Document("balance", from - amount)));
        ctx.update(b, new Document("$set", new Document("balance", to + amount)));
        return true;
    }

    private long balance(String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    private MongoClient countingClient() {
        return CommandsTo.client(mongo.uri(), "accounts", (name, command) -> {
            if (!name.equals("update")) {
                return;
            }
            int takes = 0;
            for (BsonValue statement : command.getArray("updates", new BsonArray())) {
                BsonDocument q = statement.asDocument().getDocument("q");
                BsonDocument set = statement.asDocument().getDocument("u").getDocument("$set", new BsonDocument());
                if (set.containsKey("_m2pc") && q.containsKey("_m2pc")) {
                    takes++;
                }
            }
            if (takes > 0) {
                takeRequests.add(takes);
            }
        });
    }
}
