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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Committed reads while two-round transfers run: debits held at the prepare, credits waiting for
 * the release (by the owner's finisher, or rolled forward by a writer that needs them). Every cut
 * of the three accounts adds up to the total, and no committed view of an account is ever negative.
 */
class TwoRoundReadCommittedTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final List<String> IDS = List.of("A", "B", "C");
    private static final long EACH = 100;

    @Test
    void whileTransfersRun_everyCutAddsUpAndNoCommittedViewIsNegative() throws Exception {
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        List<DocumentRef> refs = new ArrayList<>();
        for (String id : IDS) {
            accounts.insertOne(new Document("_id", id).append("balance", EACH).append("pendingTransactions", List.of()));
            refs.add(DocumentRef.of(db, "accounts", id));
        }
        mongo.invariants().expectTotal(db, EACH * IDS.size());
        TransactionManager writer = TransactionManager.builder().target("default", mongo.client()).database(db)
                .application("writer").twoRoundCommit(true).finishInBackground(true).build();
        TransactionManager reader = TransactionManager.builder().target("default", mongo.newClient()).database(db)
                .application("reader").build();
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        AtomicInteger cuts = new AtomicInteger();
        AtomicInteger committed = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            threads.add(new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < 40; i++) {
                    int from = random.nextInt(3);
                    int to = (from + 1 + random.nextInt(2)) % 3;
                    long value = 1 + random.nextInt(60);
                    TransactionOutcome outcome = writer.run(List.of(
                            Operation.increment(refs.get(from), "balance", -value, new Document("balance", new Document("$gte", value))),
                            Operation.increment(refs.get(to), "balance", value, null)));
                    if (outcome.isCommitted()) {
                        committed.incrementAndGet();
                    }
                }
            }));
        }
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            boolean cut = r == 0;
            readers.add(new Thread(() -> {
                while (!stop.get()) {
                    if (cut) {
                        List<Optional<Document>> views = reader.readCommitted(refs, Duration.ofSeconds(30));
                        long total = 0;
                        for (Optional<Document> view : views) {
                            long balance = ((Number) view.orElseThrow().get("balance")).longValue();
                            total += balance;
                            if (balance < 0) {
                                wrong.add("negative in a cut: " + views);
                            }
                        }
                        if (total != EACH * IDS.size()) {
                            wrong.add("cut adds up to " + total + ": " + views);
                        }
                        cuts.incrementAndGet();
                    } else {
                        for (DocumentRef ref : refs) {
                            long balance = ((Number) reader.readCommitted(ref).orElseThrow().get("balance")).longValue();
                            if (balance < 0) {
                                wrong.add("committed view of " + ref.id() + " is " + balance);
                            }
                        }
                    }
                }
            }));
        }
        readers.forEach(Thread::start);
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join();
        }
        assertThat(writer.awaitFinished(Duration.ofSeconds(60))).isTrue();
        assertThat(wrong).as("views that no committed state had").isEmpty();
        assertThat(cuts.get()).as("cuts read").isPositive();
        assertThat(committed.get()).as("transfers committed").isPositive();
    }
}
