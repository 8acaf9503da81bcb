package io.mongo2pc.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The batching itself, without a database: every thread gets its own answer, or its request's error. */
class BatcherTest {

    @Test
    void manyThreads_eachGetsItsOwnAnswer_oneRequestInFlight_andRequestsAreShared() throws Exception {
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        AtomicInteger requests = new AtomicInteger();
        Batcher<Integer, Integer> batcher = new Batcher<>(inputs -> {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            requests.incrementAndGet();
            try {
                Thread.sleep(1); // a round trip, so that others queue meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            List<Integer> out = new ArrayList<>();
            inputs.forEach(i -> out.add(i * 2));
            inFlight.decrementAndGet();
            return out;
        }, i -> 1, 64);
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int base = t * 1000;
            futures.add(pool.submit(() -> {
                int wrong = 0;
                for (int i = 0; i < 200; i++) {
                    if (batcher.submit(base + i) != 2 * (base + i)) {
                        wrong++;
                    }
                }
                return wrong;
            }));
        }
        for (Future<Integer> f : futures) {
            assertThat(f.get(1, TimeUnit.MINUTES)).isZero();
        }
        pool.shutdown();
        assertThat(maxInFlight.get()).isEqualTo(1);
        assertThat(requests.get()).as("requests for 3200 inputs").isLessThan(3200);
    }

    @Test
    void aFailedRequest_throwsToEveryThreadItCarried_andTheNextRequestWorks() {
        Batcher<String, String> batcher = new Batcher<>(inputs -> {
            if (inputs.contains("bad")) {
                throw new IllegalArgumentException("refused: " + inputs);
            }
            return inputs.stream().map(String::toUpperCase).toList();
        }, s -> 1, 8);
        assertThatThrownBy(() -> batcher.submit("bad")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad");
        assertThat(batcher.submit("good")).isEqualTo("GOOD");
    }

    @Test
    void aSenderThatLosesAnswers_isAnErrorNotAWrongAnswer() {
        Batcher<String, String> batcher = new Batcher<>(inputs -> List.of(), s -> 1, 8);
        assertThatThrownBy(() -> batcher.submit("x")).isInstanceOf(IllegalStateException.class).hasMessageContaining("answers");
    }
}
