package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tutorial-rules and two-round transactions on the same accounts at once: guarded debits written
 * as updates ({@code $inc} under a guard, a lock) and as increments (a hold or a marker), credits as
 * increments, each with a ledger insert; readers take consistent cuts meanwhile. Money is
 * conserved in every cut, no stored balance is ever below zero, every committed transaction's
 * ledger line exists and no other, and nothing is left locked.
 *
 * <p>Committed balances: tutorial-rules transfers credit only a0 and a1, both rules debit every
 * account. A tutorial-rules credit is in the stored balance from its apply, so a debit of either
 * rules may rely on it before it commits, and a cut taken then shows that account below zero by
 * at most the credit (docs/PROTOCOL.md, "Read committed"; docs/TWO-ROUND.md, "Rules in force").
 * So a cut's committed balance is never below minus the tutorial-rules credits to that account in
 * flight during the cut: never below zero on a2 and a3, which only two-round transfers credit.
 */
class TwoRoundMixedRulesStressTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ACCOUNTS = 4;
    private static final long START = 300L;
    /** Accounts 0 .. TUTORIAL_CREDITED-1 receive tutorial-rules credits; the others only two-round ones. */
    private static final int TUTORIAL_CREDITED = 2;

    /** A tutorial-rules credit, in flight from {@code start} until {@code end} (ticks of {@link #ticks}; end 0: still running, or its run threw). */
    private record Credit(int to, long amount, long start, AtomicLong end) {
    }

    private final AtomicLong ticks = new AtomicLong();
    private final ConcurrentLinkedQueue<Credit> credits = new ConcurrentLinkedQueue<>();

    /** The tutorial-rules credits to account {@code i} in flight at some moment between ticks {@code from} and {@code to}. */
    private long creditsInFlight(int i, long from, long to) {
        long sum = 0;
        for (Credit credit : credits) {
            long end = credit.end().get();
            if (credit.to() == i && credit.start() < to && (end == 0 || end > from)) {
                sum += credit.amount();
            }
        }
        return sum;
    }

    private static TransactionManager manager(boolean twoRound) {
        return TransactionManager.builder().target("default", mongo.client()).database(mongo.database())
                .application(twoRound ? "rules2" : "rules1").twoRoundCommit(twoRound).finishInBackground(false)
                .conflictTimeout(Duration.ofSeconds(3)).retryTimeout(Duration.ofSeconds(20)).build();
    }

    private static DocumentRef account(int i) {
        return DocumentRef.of(mongo.database(), "accounts", "a" + i);
    }

    @Test
    void mixedRules_updatesAndIncrementsOnTheSameAccounts_conserveMoney_noOverdraft_noLockLeft() throws Exception {
        MongoCollection<Document> accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        MongoCollection<Document> ledger = mongo.client().getDatabase(mongo.database()).getCollection("ledger");
        for (int i = 0; i < ACCOUNTS; i++) {
            accounts.insertOne(new Document("_id", "a" + i).append("balance", START));
        }
        TransactionManager rules1 = manager(false);
        TransactionManager rules2 = manager(true);
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> committedLines = new ConcurrentLinkedQueue<>();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger canceled = new AtomicInteger();
        AtomicBoolean writing = new AtomicBoolean(true);
        int writers = 4;
        CountDownLatch finished = new CountDownLatch(writers);
        CountDownLatch firstCut = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        for (int w = 0; w < writers; w++) {
            boolean twoRound = w % 2 == 0;
            boolean asUpdate = w < 2;
            long seed = 17L * (w + 1);
            pool.submit(() -> {
                Random random = new Random(seed);
                try {
                    for (int n = 0; n < 15; n++) {
                        if (n == 7 && !firstCut.await(2, TimeUnit.MINUTES)) {
                            problems.add("no cut was taken while writing");
                        }
                        int from = random.nextInt(ACCOUNTS);
                        int to = twoRound ? (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS
                                : from < TUTORIAL_CREDITED ? 1 - from : random.nextInt(TUTORIAL_CREDITED);
                        long amount = 1 + random.nextInt(250);
                        Document guard = new Document("balance", new Document("$gte", amount));
                        Operation debit = asUpdate
                                ? Operation.update(account(from), new Document("$inc", new Document("balance", -amount)), guard)
                                : Operation.increment(account(from), "balance", -amount, guard);
                        String line = UUID.randomUUID().toString();
                        List<Operation> ops = List.of(debit, Operation.increment(account(to), "balance", amount, null),
                                Operation.insert(DocumentRef.of(mongo.database(), "ledger", line), new Document("amount", amount)));
                        Credit credit = twoRound ? null : new Credit(to, amount, ticks.incrementAndGet(), new AtomicLong());
                        if (credit != null) {
                            credits.add(credit);
                        }
                        try {
                            TransactionOutcome outcome = (twoRound ? rules2 : rules1).run(ops);
                            if (credit != null) {
                                credit.end().set(ticks.incrementAndGet()); // committed or canceled: no longer in flight
                            }
                            if (outcome.state() == TransactionState.DONE) {
                                done.incrementAndGet();
                                committedLines.add(line);
                            } else if (outcome.state() == TransactionState.CANCELED) {
                                canceled.incrementAndGet();
                            } else {
                                problems.add("outcome " + outcome.state() + " " + outcome.reason());
                            }
                        } catch (RuntimeException e) {
                            problems.add((twoRound ? "rules2 " : "rules1 ") + e);
                        }
                    }
                } catch (InterruptedException e) {
                    problems.add("writer interrupted");
                } finally {
                    finished.countDown();
                }
            });
        }
        AtomicInteger cuts = new AtomicInteger();
        pool.submit(() -> {
            List<DocumentRef> all = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                all.add(account(i));
            }
            while (writing.get()) {
                try {
                    long from = ticks.incrementAndGet();
                    List<Optional<Document>> cut = rules2.readCommitted(all);
                    long to = ticks.incrementAndGet();
                    long total = 0;
                    for (int i = 0; i < ACCOUNTS; i++) {
                        long balance = ((Number) cut.get(i).orElseThrow().get("balance")).longValue();
                        long allowed = creditsInFlight(i, from, to);
                        if (balance < -allowed) {
                            problems.add("committed balance below zero by more than the tutorial-rules credits in flight ("
                                    + allowed + ") in a cut: " + cut.get(i).get().toJson());
                        }
                        total += balance;
                    }
                    if (total != ACCOUNTS * START) {
                        problems.add("a cut holds " + total + ": " + cut);
                    }
                    cuts.incrementAndGet();
                    firstCut.countDown();
                    for (Document stored : accounts.find()) {
                        if (((Number) stored.get("balance")).longValue() < 0) {
                            problems.add("stored balance below zero: " + stored.toJson());
                        }
                    }
                } catch (RuntimeException e) {
                    problems.add("reader " + e);
                }
            }
        });
        assertThat(finished.await(10, TimeUnit.MINUTES)).as("writers finished").isTrue();
        writing.set(false);
        pool.shutdown();
        assertThat(pool.awaitTermination(2, TimeUnit.MINUTES)).isTrue();
        rules2.recover(Duration.ZERO);

        long total = 0;
        for (Document stored : accounts.find()) {
            assertThat(stored.keySet()).as("lock or entry left: " + stored.toJson()).noneMatch(k -> LibraryFields.leftover(k));
            assertThat(stored.getList("pendingTransactions", Object.class, List.of())).as("marker left: " + stored.toJson()).isEmpty();
            assertThat(((Number) stored.get("balance")).longValue()).as("no overdraft: " + stored.toJson()).isNotNegative();
            total += ((Number) stored.get("balance")).longValue();
        }
        List<String> lines = new ArrayList<>();
        for (Document line : ledger.find()) {
            assertThat(line.keySet()).as("lock left on a ledger line: " + line.toJson()).noneMatch(k -> LibraryFields.leftover(k));
            lines.add(line.getString("_id"));
        }
        System.out.println("done " + done + " canceled " + canceled + " cuts " + cuts + " problems " + problems);
        assertThat(problems).isEmpty();
        assertThat(total).as("money conserved").isEqualTo(ACCOUNTS * START);
        assertThat(lines).as("exactly the committed transactions' ledger lines").containsExactlyInAnyOrderElementsOf(committedLines);
        assertThat(done.get()).as("some transactions committed").isPositive();
        assertThat(cuts.get()).as("cuts taken while writing").isPositive();
    }
}
