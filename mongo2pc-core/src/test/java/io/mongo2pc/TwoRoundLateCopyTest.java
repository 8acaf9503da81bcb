package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two-round commit's late writes and the markers others meet, with round 1 inserting the
 * document pending (the commit insert's late copies have their own test): a transaction document whose
 * insert the network delivered after its deadline (canceled by recovery, never rolled forward);
 * an owner paused with its prepares landed and its insert not sent, whose prepares a resolver
 * undoes behind a tombstone (the owner's insert then fails and it reports canceled); a transfer
 * out of an account whose committed credit was not released yet (the writer rolls it forward).
 */
class TwoRoundLateCopyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SKEW = Duration.ofMillis(100);

    private TwoAccounts two;
    private MongoCollection<Document> accounts;
    private DocumentRef a;
    private DocumentRef b;

    private void accounts(long balanceA, long balanceB) {
        two = TwoAccounts.create(mongo, balanceA, balanceB);
        accounts = two.collection();
        a = two.a();
        b = two.b();
        mongo.invariants().expectTotal(mongo.database(), balanceA + balanceB);
    }

    private static TransactionManager manager(MongoClient client, CrashHook hook) {
        return manager(client, hook, LEASE);
    }

    private static TransactionManager manager(MongoClient client, CrashHook hook, Duration lease) {
        return TransactionManager.builder().finishInBackground(false).target("default", client).database(mongo.database()).application("late")
                .twoRoundCommit(true).commitInsert(false).lease(lease).maxClockSkew(SKEW).retryTimeout(Duration.ofSeconds(10)).crashHook(hook).build();
    }

    private List<Operation> transfer(DocumentRef from, DocumentRef to, long value) {
        return List.of(Operation.increment(from, "balance", -value, new Document("balance", new Document("$gte", value))),
                Operation.increment(to, "balance", value, null));
    }

    private List<Long> balances() {
        return two.settledBalances();
    }

    private Document transaction(Object id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("transactions").find(new Document("_id", id)).first();
    }

    @Test
    void insertDeliveredAfterItsDeadline_ownerGone_recoveryCancelsIt() throws Exception {
        accounts(100, 0);
        AtomicInteger held = new AtomicInteger();
        Object[] id = new Object[1];
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = MongoClients.create(MongoClientSettings.builder()
                     .applyConnectionString(new ConnectionString(proxy.uri()))
                     .applyToClusterSettings(c -> c.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            // The network holds the insert of the transaction document past its deadline; the owner dies once it lands.
            proxy.runBefore(request -> request.contains("insertedAt") && request.contains("setOnInsert"), () -> {
                held.incrementAndGet();
                sleep(LEASE.toMillis() + 300);
            });
            CrashHook dieAfterInsert = (point, tx) -> {
                id[0] = tx;
                if (point.equals(CrashPoint.after(CrashPoint.Step.INSERT, -1))) {
                    throw new IllegalStateException("the owner's process ends here");
                }
            };
            assertThatThrownBy(() -> manager(viaProxy, dieAfterInsert).run(transfer(a, b, 30))).hasMessageContaining("process ends");
        }
        assertThat(held).hasValue(1);
        Document late = transaction(id[0]);
        assertThat(late.getDate("insertedAt")).as("inserted after its deadline").isAfterOrEqualTo(late.getDate("until"));
        mongo.expireLeases(mongo.database());
        manager(mongo.newClient(), CrashHook.NONE).recover(Duration.ZERO);
        Document after = transaction(id[0]);
        assertThat(after.getString("state")).isEqualTo(TransactionState.CANCELED.stored());
        assertThat(after.getString("code")).isEqualTo(ReasonCode.TIMED_OUT.name());
        assertThat(balances()).containsExactly(100L, 0L);
    }

    @Test
    void ownerPausedBeforeItsInsert_preparesUndoneBehindATombstone_ownerReportsCanceled() throws Exception {
        accounts(100, 0);
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicBoolean once = new AtomicBoolean();
        CrashHook pause = (point, tx) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.INSERT, -1)) && once.compareAndSet(false, true)) {
                paused.countDown();
                try {
                    resume.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        Duration ownerLease = Duration.ofSeconds(4); // room for the check before the deadline on a loaded machine
        TransactionManager owner = manager(mongo.client(), pause, ownerLease);
        CompletableFuture<TransactionOutcome> running = CompletableFuture.supplyAsync(() -> owner.run(transfer(a, b, 30)));
        assertThat(paused.await(10, TimeUnit.SECONDS)).isTrue();
        // The prepares go out beside the insert, not before it: on a loaded machine the hold may
        // land a moment after the insert's thread reached its pause (seen).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (accounts.find(new Document("_id", "A")).first().getLong("balance") != 70L && System.nanoTime() < deadline) {
            sleep(10);
        }
        Document held = accounts.find(new Document("_id", "A")).first();
        assertThat(held.getLong("balance")).as("the hold landed").isEqualTo(70L);
        Instant until = held.keySet().stream().filter(k -> LibraryFields.entry(k)).findFirst()
                .map(k -> held.get(k, Document.class).getDate("until").toInstant()).orElseThrow();

        TransactionManager other = manager(mongo.newClient(), CrashHook.NONE);
        other.recover(Duration.ZERO);
        if (Instant.now().isBefore(until)) { // the embedded server's clock is this host's
            assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance"))
                    .as("before the deadline no resolver may undo a prepare").isEqualTo(70L);
        }
        sleep(Math.max(0, Duration.between(Instant.now(), until.plus(SKEW)).toMillis() + 50));
        other.recover(Duration.ZERO);
        assertThat(balances()).as("undone behind a tombstone").containsExactly(100L, 0L);

        resume.countDown();
        TransactionOutcome outcome = running.get(30, TimeUnit.SECONDS);
        assertThat(outcome.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).isEqualTo(ReasonCode.TIMED_OUT);
        assertThat(transaction(outcome.id()).getBoolean("tombstone")).isTrue();
        assertThat(balances()).containsExactly(100L, 0L);
    }

    @Test
    void committedCreditNotReleasedYet_aTransferOutOfItRollsItForwardAndGoesThrough() {
        accounts(0, 100);
        AtomicBoolean once = new AtomicBoolean();
        CrashHook dieBeforeRelease = (point, tx) -> {
            if (point.step() == CrashPoint.Step.RELEASE && once.compareAndSet(false, true)) {
                throw new IllegalStateException("the owner's process ends after the commit point");
            }
        };
        assertThatThrownBy(() -> manager(mongo.client(), dieBeforeRelease).run(transfer(b, a, 50)))
                .hasMessageContaining("process ends");
        assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).as("credit not released").isZero();

        TransactionOutcome outcome = manager(mongo.newClient(), CrashHook.NONE).run(transfer(a, b, 30));
        assertThat(outcome.state()).as(String.valueOf(outcome.reason())).isEqualTo(TransactionState.DONE);
        assertThat(accounts.find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(20L);
        // The rest of the crashed transfer (B's entry, done) is recovery's once its lease ran out.
        mongo.expireLeases(mongo.database());
        manager(mongo.newClient(), CrashHook.NONE).recover(Duration.ZERO);
        assertThat(balances()).containsExactly(20L, 80L);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
