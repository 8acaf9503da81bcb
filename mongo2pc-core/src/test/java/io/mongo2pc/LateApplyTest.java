package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Tag;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An apply whose request fails without an answer (the client timed out while the network still
 * held it) and then reaches the server late. Regression (found in review): the owner re-sent the
 * apply at once, committed and released the marker, and the late copy then matched again (no
 * marker, deadline not passed, guard holds): A was debited twice and kept a marker for good. The
 * owner now waits until the write's deadline has passed before retrying, so a late copy lands
 * while the marker is there (and changes nothing) or is refused by the deadline. The same under the
 * two-round commit, where the held request carries round 1's prepares.
 */
@Tag("slow")
class LateApplyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @ParameterizedTest(name = "request held {0} ms, two-round commit {1}")
    // lands before its deadline (lease 3 s: the owner, its retry and its commit fit in it even on a machine at load 25,
    // where 1 s did not) / after it; under the two-round commit the held request is round 1's prepares
    @CsvSource({"600, false", "4000, false", "600, true", "4000, true"})
    void applyDeliveredLateAfterATimeout_takesEffectOnce(int heldMillis, boolean twoRound) throws Exception {
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        accounts.insertMany(List.of(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        mongo.invariants().expectTotal(db, 100L);
        DocumentRef a = DocumentRef.of(db, "accounts", "A");
        DocumentRef b = DocumentRef.of(db, "accounts", "B");
        AtomicInteger held = new AtomicInteger();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .applyToSocketSettings(s -> s.readTimeout(300, TimeUnit.MILLISECONDS))
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            TransactionManager manager = TransactionManager.builder().finishInBackground(false).target("default", viaProxy).database(db)
                    .application("app").twoRoundCommit(twoRound).lease(Duration.ofSeconds(3)).maxClockSkew(Duration.ofMillis(100))
                    .retryTimeout(Duration.ofSeconds(10)).build();
            // the debit's apply is held by the network; the client gives up after 300 ms
            Predicate<String> apply = request -> request.contains("update") && request.contains("accounts") && request.contains("$inc");
            AtomicReference<Thread> holding = new AtomicReference<>();
            AtomicInteger sent = new AtomicInteger();
            AtomicBoolean heldSent = new AtomicBoolean();
            proxy.runBefore(apply, () -> {
                held.incrementAndGet();
                holding.set(Thread.currentThread());
                sleep(heldMillis);
            });
            // after the hold, just before each such request goes on to the server: counted, the held one noted
            proxy.runBeforeEvery(apply, () -> {
                sent.incrementAndGet();
                if (Thread.currentThread() == holding.get()) {
                    heldSent.set(true);
                }
            });
            proxy.countAnswers(apply);

            TransactionOutcome outcome = manager.run(List.of(
                    Operation.increment(a, "balance", -30L, new Document("balance", new Document("$gte", 30L))),
                    Operation.increment(b, "balance", 30L, null)));

            assertThat(held).as("the apply was held").hasValue(1);
            assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
            // whatever was held has reached the server: it was sent on, and the server answered every such request
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!(heldSent.get() && proxy.answered.get() >= sent.get()) && System.nanoTime() < giveUp) {
                Thread.sleep(20);
            }
            assertThat(heldSent).as("the held request went on to the server").isTrue();
            List<Document> after = accounts.find().sort(new Document("_id", 1)).into(new ArrayList<>());
            assertThat(after.get(0).getLong("balance")).as("A after one transfer of 30").isEqualTo(70L);
            assertThat(after.get(0).getList("pendingTransactions", Object.class)).as("markers on A").isEmpty();
            assertThat(after.get(1).getLong("balance")).isEqualTo(30L);
            assertThat(after.get(1).getList("pendingTransactions", Object.class)).as("markers on B").isEmpty();
            assertThat(after).allSatisfy(doc -> assertThat(doc.keySet()).noneMatch(k -> LibraryFields.leftover(k)));
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
