package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.CommittedHistory;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

/**
 * {@code readCommitted}, of one document and of several as one cut, while writers commit and cancel
 * transactions and prune removes finished ones as soon as they end: every value read must be one
 * that committed transactions wrote, at one moment of the read ({@link CommittedHistory}), and no
 * writer may be told anything but its outcome. Runs {@code -Dm2pc.history.seconds} (default 20).
 */
@Tag("slow")
class ReadCommittedHistoryTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ACCOUNTS = 8;
    private static final long INITIAL = 1_000L;
    private static final long SECONDS = Long.getLong("m2pc.history.seconds", 20L);

    @Test
    void readCommitted_writersReadersAndPruneAtOnce_everyReadIsExplainedByTheCommittedHistory() throws Exception {
        // Given eight accounts, eight writers (transfers and three-account transactions, a quarter of them
        // refused by a guard, half finishing in the background), four readers and prune, forced, of every
        // finished transaction as soon as it ends (to a stub, or with its id)
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        List<DocumentRef> refs = new ArrayList<>();
        for (int a = 0; a < ACCOUNTS; a++) {
            accounts.insertOne(new Document("_id", "a" + a).append("balance", INITIAL).append("pendingTransactions", List.of()));
            refs.add(DocumentRef.of(db, "accounts", "a" + a));
        }
        CommittedHistory history = new CommittedHistory(INITIAL);
        Queue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger canceled = new AtomicInteger();
        AtomicInteger gaveUp = new AtomicInteger();
        AtomicLong pruned = new AtomicLong();
        long deadline = System.nanoTime() + Duration.ofSeconds(SECONDS).toNanos();
        try (TransactionManager background = TestManagers.builder(mongo.newClient(), db, "background")
                     .crashHook(history.hook()).build();
             TransactionManager inline = TestManagers.builder(mongo.newClient(), db, "inline")
                     .crashHook(history.hook()).finishInBackground(false).build();
             TransactionManager reader = TestManagers.builder(mongo.newClient(), db, "reader").build();
             TransactionManager pruner = TestManagers.builder(mongo.newClient(), db, "pruner").build()) {
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 8; w++) {
                TransactionManager manager = w % 2 == 0 ? background : inline;
                SplittableRandom random = new SplittableRandom(w);
                threads.add(new Thread(() -> {
                    while (System.nanoTime() < deadline) {
                        write(manager, refs, random, history, failures, canceled);
                    }
                }, "writer-" + w));
            }
            for (int r = 0; r < 4; r++) {
                SplittableRandom random = new SplittableRandom(100 + r);
                threads.add(new Thread(() -> {
                    while (System.nanoTime() < deadline) {
                        read(reader, refs, random, history, failures, gaveUp);
                    }
                }, "reader-" + r));
            }
            PruneOptions stubs = PruneOptions.builder().force(true).includeCanceled(true).build();
            threads.add(new Thread(() -> {
                for (int round = 0; System.nanoTime() < deadline; round++) {
                    try {
                        // every finished transaction at once: replaced by its stub, or deleted with its id
                        pruned.addAndGet(pruner.prune(Duration.ZERO, round % 2 == 0 ? stubs : TestManagers.FORGET_NOW).pruned());
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        failures.add("prune: " + e);
                    }
                }
            }, "pruner"));

            // When they all run at once
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
        }

        System.out.printf("history: %d committed, %d canceled, %d reads (%d cuts gave up), %d pruned%n",
                history.committedCount(), canceled.get(), history.reads(), gaveUp.get(), pruned.get());
        // Then every read is explained by the committed history, and no writer was told anything but its outcome
        assertThat(history.committedCount()).as("committed transactions").isGreaterThan(20);
        assertThat(canceled).as("canceled transactions").hasPositiveValue();
        assertThat(pruned).as("transactions pruned while reads ran").hasPositiveValue();
        assertThat(history.reads()).as("reads (%d gave up)", gaveUp.get()).isGreaterThan(20);
        assertSoftly(softly -> {
            softly.assertThat(history.unexplained(10)).as("reads no moment of the committed history explains, of %d reads and %d commits",
                    history.reads(), history.committedCount()).isEmpty();
            softly.assertThat(failures).as("errors of writers, readers and prune").isEmpty();
        });
        mongo.invariants().expectTotal(db, ACCOUNTS * INITIAL);
    }

    /** One transaction: a transfer, or two debits and a credit; a quarter of them with a guard that cannot hold. */
    private static void write(TransactionManager manager, List<DocumentRef> refs, SplittableRandom random,
                              CommittedHistory history, Queue<String> failures, AtomicInteger canceled) {
        long[] effect = new long[ACCOUNTS];
        List<Operation> ops = new ArrayList<>();
        boolean refused = random.nextInt(4) == 0;
        int[] picked = random.ints(0, ACCOUNTS).distinct().limit(3).toArray();
        long first = 1 + random.nextInt(100);
        long second = random.nextBoolean() ? 1 + random.nextInt(100) : 0;
        ops.add(debit(refs, picked[0], first, false, effect));
        if (second > 0) {
            ops.add(debit(refs, picked[1], second, refused, effect));
        }
        ops.add(Operation.increment(refs.get(picked[2]), "balance", first + second, null));
        effect[picked[2]] += first + second;
        if (refused && second == 0) {
            ops.set(0, debit(refs, picked[0], first, true, new long[ACCOUNTS]));
        }
        long start = System.nanoTime();
        try {
            TransactionOutcome outcome = manager.run(ops);
            long end = System.nanoTime();
            if (outcome.isCommitted()) {
                history.committed(outcome.id(), effect, start, end);
            } else {
                canceled.incrementAndGet();
            }
        } catch (TransactionException e) {
            failures.add(Thread.currentThread().getName() + ": transaction " + e.transactionId() + " threw " + e);
            if (e.lastKnownState() == TransactionState.APPLIED || e.lastKnownState() == TransactionState.DONE) {
                history.committed(e.transactionId(), effect, start, System.nanoTime()); // past its commit point all the same
            }
        } catch (RuntimeException e) {
            failures.add(Thread.currentThread().getName() + ": " + e);
        }
    }

    private static Operation debit(List<DocumentRef> refs, int account, long amount, boolean refused, long[] effect) {
        effect[account] -= amount;
        long floor = refused ? amount + 1_000_000L : amount;
        return Operation.increment(refs.get(account), "balance", -amount, new Document("balance", new Document("$gte", floor)));
    }

    /** A cut of every account, or one account alone. */
    private static void read(TransactionManager reader, List<DocumentRef> refs, SplittableRandom random,
                             CommittedHistory history, Queue<String> failures, AtomicInteger gaveUp) {
        boolean cut = random.nextBoolean();
        int one = random.nextInt(ACCOUNTS);
        int[] which = cut ? java.util.stream.IntStream.range(0, ACCOUNTS).toArray() : new int[] {one};
        long start = System.nanoTime();
        try {
            List<Optional<Document>> views = cut ? reader.readCommitted(refs) : List.of(reader.readCommitted(refs.get(one)));
            long end = System.nanoTime();
            long[] values = new long[which.length];
            for (int n = 0; n < which.length; n++) {
                values[n] = ((Number) views.get(n).orElseThrow().get("balance")).longValue();
            }
            history.read(cut ? "cut" : "single", which, values, start, end);
        } catch (TransactionException e) {
            if (cut && e.getMessage().contains("one consistent cut")) {
                gaveUp.incrementAndGet(); // no cut within the timeout: allowed, and nothing was read
            } else {
                failures.add(Thread.currentThread().getName() + ": " + e);
            }
        } catch (RuntimeException e) {
            failures.add(Thread.currentThread().getName() + ": " + e);
        }
    }
}
