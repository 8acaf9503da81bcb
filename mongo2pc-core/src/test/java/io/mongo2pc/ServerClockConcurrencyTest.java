package io.mongo2pc;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guarantee 4 relies on reading the server's clock; under concurrency (many recoverers and
 * cancels at once) every read must still return a time, never fail or go wildly wrong.
 */
class ServerClockConcurrencyTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void serverTime_readByEightThreadsOfTwoManagers_alwaysReturnsATime() throws Exception {
        List<TransactionManager> managers = List.of(
                TransactionManager.builder().target("default", mongo.client()).database(mongo.database()).build(),
                TransactionManager.builder().target("default", mongo.newClient()).database(mongo.database()).build());
        Instant before = Instant.now().minusSeconds(5);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            TransactionManager m = managers.get(t % 2);
            futures.add(pool.submit(() -> {
                int ok = 0;
                for (int i = 0; i < 400; i++) {
                    Instant now = m.serverTime();
                    if (now.isAfter(before) && now.isBefore(Instant.now().plusSeconds(5))) {
                        ok++;
                    }
                }
                return ok;
            }));
        }
        int ok = 0;
        for (Future<Integer> f : futures) {
            ok += f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(ok).isEqualTo(8 * 400);
    }
}
