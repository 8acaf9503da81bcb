package io.mongo2pc;

import com.mongodb.MongoSocketReadException;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mongo2pc.CommitInserts.COMMIT_INSERT;
import static io.mongo2pc.CommitInserts.balances;
import static io.mongo2pc.CommitInserts.transfer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The commit insert's answer lost (docs/COMMIT-INSERT.md, "The owner, step by step"): the server
 * inserted the document and the owner never heard it. The owner sends it again (a copy can only
 * meet the duplicate key), finds its own document inserted in time and reports committed, once;
 * the money moves once. And the ambiguous case: every copy held by the network past the deadline,
 * so the document found is one inserted late after a copy was in doubt: the outcome cannot be
 * known (a copy in doubt may have committed, finished and been pruned), the owner throws
 * {@link OutcomeUnknownException}, undoes its entries and nothing moves.
 */
class CommitInsertLostAnswerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final CrashPoint BEFORE_COMMIT = CrashPoint.before(CrashPoint.Step.COMMIT, -1);
    private static final CrashPoint AFTER_COMMIT = CrashPoint.after(CrashPoint.Step.COMMIT, -1);

    private static TransactionManager owner(MongoClient client, Duration lease, CrashHook hook) {
        return TransactionManager.builder().target("default", client).database(mongo.database()).application("owner")
                .finishInBackground(false).lease(lease).maxClockSkew(Duration.ofMillis(100))
                .retryTimeout(Duration.ofSeconds(30)).crashHook(hook).build();
    }

    @Test
    void commitInsertAcknowledgementLostAtItsCrashPoint_ownerReportsDoneOnce_moneyMovesOnce() {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        AtomicInteger lost = new AtomicInteger();
        AtomicInteger inserts = new AtomicInteger();
        CrashHook loseTheAnswerOnce = (point, id) -> {
            if (point.step() == CrashPoint.Step.INSERT) {
                inserts.incrementAndGet();
            }
            if (point.equals(AFTER_COMMIT) && lost.getAndIncrement() == 0) {
                throw new MongoSocketReadException("the commit insert's answer is lost", new ServerAddress());
            }
        };

        TransactionOutcome outcome = owner(mongo.client(), Duration.ofSeconds(20), loseTheAnswerOnce).run("t-1", transfer(two));

        assertThat(lost.get()).as("the answer was lost at its crash point").isGreaterThanOrEqualTo(1);
        assertThat(inserts).as("no pending document: the commit insert's path").hasValue(0);
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(balances(two.collection())).as("the transfer moved 10 once").containsExactly(90L, 10L);
        Document stored = mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
        assertThat(stored.getString("state")).isEqualTo("done");
        assertThat(stored.getLong("epoch")).as("finished by its owner, not taken over").isEqualTo(1L);
    }

    @Test
    void commitInsertReplyDroppedByTheNetwork_ownerReportsDoneOnce_moneyMovesOnce() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient()) {
            proxy.countAnswers(COMMIT_INSERT);
            proxy.dropReplies(1, COMMIT_INSERT);

            TransactionOutcome outcome = owner(viaProxy, Duration.ofSeconds(20), CrashHook.NONE).run("t-1", transfer(two));

            assertThat(proxy.dropped).as("the server ran the commit insert, its reply was dropped").hasValue(1);
            assertThat(proxy.answered.get()).as("the copy sent again met the document").isGreaterThanOrEqualTo(2);
            assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
            assertThat(balances(two.collection())).as("the transfer moved 10 once").containsExactly(90L, 10L);
        }
        Document stored = mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
        assertThat(stored.getString("state")).isEqualTo("done");
    }

    @Test
    void copyInDoubt_documentFoundInsertedAfterTheDeadline_ownerThrowsOutcomeUnknown_nothingMoves() throws Exception {
        TwoAccounts two = TwoAccounts.create(mongo, 100, 0);
        MongoCollection<Document> accounts = two.collection();
        mongo.invariants().expectTotal(mongo.database(), 100L);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (FaultProxy proxy = new FaultProxy(mongo.uri()); MongoClient viaProxy = proxy.newClient(300)) {
            // Every copy of the commit insert waits in the network; the driver gives up on each after 300 ms.
            CommitInserts.holdEvery(proxy, held, release);
            TransactionManager owner = owner(viaProxy, Duration.ofSeconds(2), CrashHook.NONE);
            CompletableFuture<TransactionOutcome> run = CompletableFuture.supplyAsync(() -> owner.run("t-1", transfer(two)));
            assertThat(held.await(30, TimeUnit.SECONDS)).as("the commit insert was sent").isTrue();
            Instant until = CommitInserts.entryUntil(accounts, "A");
            CommitInserts.awaitPast(until, Duration.ofMillis(200));
            proxy.stopEvery();
            release.countDown(); // every copy lands now, after the deadline: the first inserts, late

            Throwable thrown = catchThrowable(() -> run.get(60, TimeUnit.SECONDS));
            assertThat(thrown).isInstanceOf(ExecutionException.class);
            assertThat(thrown.getCause()).as("a copy was in doubt and the document is late").isInstanceOf(OutcomeUnknownException.class);
            assertThat(((OutcomeUnknownException) thrown.getCause()).transactionId()).isEqualTo("t-1");
            assertThat(proxy.answered.get()).as("the held copies reached the server").isGreaterThanOrEqualTo(1);
        }
        assertThat(balances(accounts)).as("undone by the nonce: nothing moved").containsExactly(100L, 0L);
        Document stored = mongo.transactions(mongo.database()).find(new Document("_id", "t-1")).first();
        assertThat(stored.getDate("insertedAt")).as("inserted late").isAfterOrEqualTo(stored.getDate("until"));
        assertThat(stored.getString("state")).as("repaired by its owner").isEqualTo("canceled");
        assertThat(stored.getString("code")).isEqualTo(ReasonCode.TIMED_OUT.name());
    }
}
