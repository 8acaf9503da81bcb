package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions of fixed operations that race for the same few documents, their operations in
 * different orders, prepared in parallel: in every round at least one commits, none waits for ever,
 * and every one that cancels does so for a reason that committed state gives (a document a committed
 * transaction inserted or deleted, funds a committed transaction spent), never because another
 * transaction that had not committed held a document it needed.
 */
class ConflictingTransactionsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final int ROUNDS = 30;
    private static final int RACERS = 8;
    /** The operations a racer picks from, by number; see {@link #operation}. */
    private static final int INC_A = 0;
    private static final int INC_B = 1;
    private static final int INSERT_C = 2;
    private static final int DEBIT = 3;
    private static final int DELETE_D = 4;
    private static final long FUNDS = 2L;

    private final List<TransactionManager> managers = new ArrayList<>();
    private MongoCollection<Document> docs;

    @BeforeEach
    void managers() {
        for (int m = 0; m < 2; m++) {
            managers.add(TestManagers.builder(mongo.client(), mongo.database(), "racer-" + m).build());
        }
        docs = mongo.client().getDatabase(mongo.database()).getCollection("docs");
    }

    @AfterEach
    void close() {
        managers.forEach(TransactionManager::close);
    }

    private static DocumentRef ref(int round, String name) {
        return DocumentRef.of(mongo.database(), "docs", name + round);
    }

    /** Operation {@code kind} of racer {@code k} in {@code round}. */
    private static Operation operation(int kind, int round, int k) {
        return switch (kind) {
            case INC_A -> Operation.update(ref(round, "a"), new Document("$inc", new Document("n", 1L)), null);
            case INC_B -> Operation.update(ref(round, "b"), new Document("$inc", new Document("n", 1L)), null);
            case INSERT_C -> Operation.insert(ref(round, "c"), new Document("by", (long) k));
            case DEBIT -> Operation.increment(ref(round, "acc"), "balance", -1L, new Document("balance", new Document("$gte", 1L)));
            case DELETE_D -> Operation.delete(ref(round, "d"), null);
            default -> throw new IllegalArgumentException("no operation " + kind);
        };
    }

    @Test
    void run_racersOverTheSameDocumentsInDifferentOrders_oneCommitsEveryRound_andEveryCancelIsExplainedByCommittedState()
            throws Exception {
        Random random = new Random(27);
        ExecutorService pool = Executors.newFixedThreadPool(RACERS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                // given documents a, b (counted by unguarded updates), d (to delete) and an account of 2,
                // and racers that each take two or three of: update a, update b, insert c, debit 1, delete d
                docs.insertOne(new Document("_id", "a" + round).append("n", 0L));
                docs.insertOne(new Document("_id", "b" + round).append("n", 0L));
                docs.insertOne(new Document("_id", "d" + round));
                docs.insertOne(new Document("_id", "acc" + round).append("balance", FUNDS).append("pendingTransactions", List.of()));
                List<List<Integer>> kinds = new ArrayList<>();
                for (int k = 0; k < RACERS; k++) {
                    List<Integer> all = new ArrayList<>(List.of(INC_A, INC_B, INSERT_C, DEBIT, DELETE_D));
                    Collections.shuffle(all, random);
                    kinds.add(List.copyOf(all.subList(0, 2 + random.nextInt(2))));
                }

                // when they all run at once
                CyclicBarrier start = new CyclicBarrier(RACERS);
                List<Future<TransactionOutcome>> futures = new ArrayList<>();
                for (int k = 0; k < RACERS; k++) {
                    int racer = k;
                    int r = round;
                    TransactionManager manager = managers.get(k % managers.size());
                    List<Operation> ops = kinds.get(k).stream().map(kind -> operation(kind, r, racer)).toList();
                    futures.add(pool.submit(() -> {
                        start.await();
                        return manager.run("race-" + r + "-" + racer, ops);
                    }));
                }
                List<TransactionOutcome> outcomes = new ArrayList<>();
                for (Future<TransactionOutcome> f : futures) {
                    outcomes.add(f.get(2, TimeUnit.MINUTES));
                }

                // then at least one committed, and the documents hold exactly what the committed ones wrote
                String context = "round " + round + ": " + kinds + " -> " + outcomes;
                int[] committed = new int[5];
                long inserter = -1;
                for (int k = 0; k < RACERS; k++) {
                    if (outcomes.get(k).isCommitted()) {
                        for (int kind : kinds.get(k)) {
                            committed[kind]++;
                        }
                        inserter = kinds.get(k).contains(INSERT_C) ? k : inserter;
                    }
                }
                assertThat(outcomes).as(context).anyMatch(TransactionOutcome::isCommitted);
                Document a = read(round, "a").orElseThrow();
                Document b = read(round, "b").orElseThrow();
                assertThat(a.get("n")).as(context).isEqualTo((long) committed[INC_A]);
                assertThat(b.get("n")).as(context).isEqualTo((long) committed[INC_B]);
                assertThat(committed[INSERT_C]).as(context).isLessThanOrEqualTo(1);
                assertThat(read(round, "c").map(c -> c.get("by"))).as(context)
                        .isEqualTo(committed[INSERT_C] == 1 ? java.util.Optional.of(inserter) : java.util.Optional.empty());
                assertThat(committed[DELETE_D]).as(context).isLessThanOrEqualTo(1);
                assertThat(read(round, "d").isPresent()).as(context).isEqualTo(committed[DELETE_D] == 0);
                assertThat(read(round, "acc").orElseThrow().get("balance")).as(context).isEqualTo(FUNDS - committed[DEBIT]);
                // and each racer that canceled was refused by what a committed racer did
                for (int k = 0; k < RACERS; k++) {
                    TransactionOutcome outcome = outcomes.get(k);
                    if (!outcome.isCommitted()) {
                        assertThat(explainedByCommitted(outcome, kinds.get(k), committed)).as(context + ": racer " + k).isTrue();
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        managers.forEach(m -> assertThat(m.awaitFinished(Duration.ofSeconds(30))).isTrue());
    }

    /** True if {@code outcome} (a cancel) is refused by a document or funds that the committed racers changed. */
    private static boolean explainedByCommitted(TransactionOutcome outcome, List<Integer> kinds, int[] committed) {
        return switch (outcome.reasonCode()) {
            case DOCUMENT_EXISTS -> kinds.contains(INSERT_C) && committed[INSERT_C] == 1;
            case DOCUMENT_MISSING -> kinds.contains(DELETE_D) && committed[DELETE_D] == 1;
            case INSUFFICIENT_FUNDS -> kinds.contains(DEBIT) && committed[DEBIT] == FUNDS;
            default -> false;
        };
    }

    private java.util.Optional<Document> read(int round, String name) {
        return managers.get(0).readCommitted(ref(round, name));
    }
}
