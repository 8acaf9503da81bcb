package io.mongo2pc.interactive;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sixteen threads increment one counter by read-modify-write (read it, write what was read plus one)
 * 200 times each: no update is lost, and every transaction finishes, the ones that lose conflicts
 * gaining priority by their first attempt's time (wait-die). The attempts are printed.
 */
@Tag("slow")
class HotCounterTest {
    private static final int THREADS = 16;
    private static final int EACH = 200;

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void counter_readModifyWriteFrom16Threads_endsExact_andEveryTransactionFinishes() throws Exception {
        DocumentRef counter = DocumentRef.of(mongo.database(), "counters", "c");
        mongo.client().getDatabase(mongo.database()).getCollection("counters").insertOne(new Document("_id", "c").append("n", 0L));
        TransactionManager tm = TestManagers.builder(mongo.client(), mongo.database(), "counter").build();
        TransactionOptions options = TransactionOptions.builder().timeout(Duration.ofMinutes(2)).build();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<List<Integer>>> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < THREADS; t++) {
            threads.add(pool.submit(() -> {
                List<Integer> attempts = new ArrayList<>();
                for (int i = 0; i < EACH; i++) {
                    TransactionResult<Long> r = tm.transact(options, ctx -> {
                        long n = ctx.get(counter).orElseThrow().getLong("n");
                        ctx.update(counter, new Document("$set", new Document("n", n + 1)));
                        return n + 1;
                    });
                    assertThat(r.outcome().isCommitted()).as(String.valueOf(r.outcome())).isTrue();
                    attempts.add(r.attempts());
                }
                return attempts;
            }));
        }
        List<Integer> attempts = new ArrayList<>();
        for (Future<List<Integer>> f : threads) {
            attempts.addAll(f.get());
        }
        pool.shutdown();
        tm.close();
        double seconds = (System.nanoTime() - start) / 1e9;

        Collections.sort(attempts);
        System.out.printf("hot counter: %d transactions in %.1f s (%.0f/s); attempts p50 %d, p99 %d, max %d, total %d%n",
                attempts.size(), seconds, attempts.size() / seconds, attempts.get(attempts.size() / 2),
                attempts.get(attempts.size() * 99 / 100), attempts.get(attempts.size() - 1), attempts.stream().mapToInt(Integer::intValue).sum());
        Document stored = mongo.client().getDatabase(mongo.database()).getCollection("counters").find().first();
        assertThat(stored.getLong("n")).as("no increment lost").isEqualTo((long) THREADS * EACH);
        assertThat(attempts).hasSize(THREADS * EACH);
    }
}
