package io.mongo2pc;

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tutorial-rules and two-round transactions on the same accounts at once: guarded debits written
 * as updates ({@code $inc} under a guard, a lock) and as increments (a hold or a marker), credits as
 * increments, each with a ledger insert; readers take consistent cuts meanwhile. Money is
 * conserved in every cut, no account is ever below zero (stored or committed), every committed
 * transaction's ledger line exists and no other, and nothing is left locked.
 */
class TwoRoundMixedRulesStressTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ACCOUNTS = 4;
    private static final long START = 300L;

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
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        for (int w = 0; w < writers; w++) {
            boolean twoRound = w % 2 == 0;
            boolean asUpdate = w < 2;
            long seed = 17L * (w + 1);
            pool.submit(() -> {
                Random random = new Random(seed);
                try {
                    for (int n = 0; n < 15; n++) {
                        int from = random.nextInt(ACCOUNTS);
                        int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                        long amount = 1 + random.nextInt(250);
                        Document guard = new Document("balance", new Document("$gte", amount));
                        Operation debit = asUpdate
                                ? Operation.update(account(from), new Document("$inc", new Document("balance", -amount)), guard)
                                : Operation.increment(account(from), "balance", -amount, guard);
                        String line = UUID.randomUUID().toString();
                        List<Operation> ops = List.of(debit, Operation.increment(account(to), "balance", amount, null),
                                Operation.insert(DocumentRef.of(mongo.database(), "ledger", line), new Document("amount", amount)));
                        try {
                            TransactionOutcome outcome = (twoRound ? rules2 : rules1).run(ops);
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
                    List<Optional<Document>> cut = rules2.readCommitted(all);
                    long total = 0;
                    for (Optional<Document> doc : cut) {
                        long balance = ((Number) doc.orElseThrow().get("balance")).longValue();
                        if (balance < 0) {
                            problems.add("committed balance below zero in a cut: " + doc.get().toJson());
                        }
                        total += balance;
                    }
                    if (total != ACCOUNTS * START) {
                        problems.add("a cut holds " + total + ": " + cut);
                    }
                    cuts.incrementAndGet();
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
            assertThat(stored.keySet()).as("lock or entry left: " + stored.toJson()).noneMatch(k -> k.startsWith("_m2pc"));
            assertThat(stored.getList("pendingTransactions", Object.class, List.of())).as("marker left: " + stored.toJson()).isEmpty();
            assertThat(((Number) stored.get("balance")).longValue()).as("no overdraft: " + stored.toJson()).isNotNegative();
            total += ((Number) stored.get("balance")).longValue();
        }
        List<String> lines = new ArrayList<>();
        for (Document line : ledger.find()) {
            assertThat(line.keySet()).as("lock left on a ledger line: " + line.toJson()).noneMatch(k -> k.startsWith("_m2pc"));
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
