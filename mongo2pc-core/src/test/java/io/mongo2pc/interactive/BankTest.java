package io.mongo2pc.interactive;

import com.mongodb.client.MongoDatabase;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bank of transfers written as bodies with no guard: read both accounts, return if the source
 * is short, write both. Run from many threads (and beside the library's own guarded transfers on
 * the same accounts), while readers read every account in one transaction: no account ever goes
 * below zero, the total is conserved, and every reader sees the total.
 */
class BankTest {
    private static final long BALANCE = 1_000L;
    private static final int TRANSFERS_EACH = 120;
    /** Long: the test is about what commits, and a busy machine makes every attempt slow. */
    static final TransactionOptions PATIENT = TransactionOptions.builder().timeout(Duration.ofMinutes(3)).build();

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static DocumentRef account(int i) {
        return DocumentRef.of(mongo.database(), "accounts", "a" + i);
    }

    private static TransactionManager manager(String application) {
        return TestManagers.builder(mongo.newClient(), mongo.database(), application).build();
    }

    /** A transfer as a body: no guard, the check is the body's. True if it moved money. */
    static TransactionResult<Boolean> transfer(TransactionManager tm, DocumentRef from, DocumentRef to, long amount) {
        return tm.transact(PATIENT, ctx -> {
            long a = ctx.get(from).orElseThrow().getLong("balance");
            long b = ctx.get(to).orElseThrow().getLong("balance");
            if (a < amount) {
                return false;
            }
            ctx.update(from, new Document("$set", new Document("balance", a - amount)));
            ctx.update(to, new Document("$set", new Document("balance", b + amount)));
            return true;
        });
    }

    @Test
    void interactiveTransfers_withReadersOfEveryAccount_neverNegative_totalConserved_everyReadSeesTheTotal() throws Exception {
        run(6, 6, 0);
    }

    /**
     * Beside the library's guarded transfers on the same accounts: both kinds settle who waits by one
     * priority (docs/CONFLICTS.md), so neither keeps the other out.
     */
    @Test
    void interactiveTransfers_mixedWithTheLibrarysTransfersOnTheSameAccounts_serialize() throws Exception {
        run(6, 4, 4);
    }

    private void run(int accounts, int interactiveWriters, int fixedWriters) throws Exception {
        MongoDatabase db = mongo.client().getDatabase(mongo.database());
        for (int i = 0; i < accounts; i++) {
            Transfers.createAccount(db, "a" + i, BALANCE);
        }
        mongo.invariants().expectTotal(mongo.database(), accounts * BALANCE);
        List<TransactionManager> managers = new ArrayList<>();
        ExecutorService pool = Executors.newCachedThreadPool();
        List<Future<?>> writers = new ArrayList<>();
        AtomicInteger moved = new AtomicInteger();
        AtomicInteger fixedCommitted = new AtomicInteger();
        for (int w = 0; w < interactiveWriters + fixedWriters; w++) {
            TransactionManager tm = manager("writer-" + w);
            managers.add(tm);
            boolean interactive = w < interactiveWriters;
            writers.add(pool.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < TRANSFERS_EACH; i++) {
                    int from = random.nextInt(accounts);
                    int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
                    long amount = 1 + random.nextInt(400);
                    if (interactive) {
                        if (transfer(tm, account(from), account(to), amount).value()) {
                            moved.incrementAndGet();
                        }
                    } else {
                        TransactionOutcome outcome = tm.run(Transfers.of(mongo.database(), "a" + from, "a" + to, amount));
                        if (outcome.isCommitted()) {
                            fixedCommitted.incrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        AtomicBoolean writing = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> wrongReads = new ConcurrentLinkedQueue<>();
        AtomicInteger reads = new AtomicInteger();
        List<Future<?>> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            TransactionManager tm = manager("reader-" + r);
            managers.add(tm);
            readers.add(pool.submit(() -> {
                while (writing.get()) {
                    List<Long> balances = tm.transact(PATIENT, ctx -> {
                        List<Long> seen = new ArrayList<>();
                        for (int i = 0; i < accounts; i++) {
                            seen.add(ctx.get(account(i)).orElseThrow().getLong("balance"));
                        }
                        return seen;
                    }).value();
                    long total = balances.stream().mapToLong(Long::longValue).sum();
                    if (total != accounts * BALANCE || balances.stream().anyMatch(b -> b < 0)) {
                        wrongReads.add(balances + " sum " + total);
                    }
                    reads.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> w : writers) {
            w.get();
        }
        writing.set(false);
        for (Future<?> r : readers) {
            r.get();
        }
        pool.shutdown();
        managers.forEach(tm -> tm.awaitFinished(Duration.ofSeconds(30)));
        managers.forEach(TransactionManager::close);

        long total = 0;
        for (Document a : db.getCollection("accounts").find()) {
            assertThat(a.getLong("balance")).as("account " + a.get("_id")).isNotNegative();
            total += a.getLong("balance");
        }
        System.out.printf("bank: %d interactive transfers moved money, %d library transfers committed, %d consistent reads%n",
                moved.get(), fixedCommitted.get(), reads.get());
        assertThat(total).as("money conserved").isEqualTo(accounts * BALANCE);
        assertThat(wrongReads).as("reads of every account in one transaction that did not sum to the total").isEmpty();
        assertThat(reads.get()).isPositive();
        assertThat(moved.get()).isPositive();
        if (fixedWriters > 0) {
            assertThat(fixedCommitted.get()).isPositive();
        }
    }
}
