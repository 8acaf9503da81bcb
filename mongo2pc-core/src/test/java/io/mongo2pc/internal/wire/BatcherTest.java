package io.mongo2pc.internal.wire;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The batching itself, without a database: every thread gets its own answer, or its request's
 * error; no more requests out than allowed; a thread never waits for an unrelated request while a
 * slot is free, and never sends a request that does not carry its own input.
 */
class BatcherTest {

    @Test
    void manyThreads_eachGetsItsOwnAnswer_oneRequestInFlight_andRequestsAreShared() throws Exception {
        CountingSender<Integer, Integer> sender = new CountingSender<>(inputs -> {
            CountingSender.sleep(1); // a round trip, so that others queue meanwhile
            return inputs.stream().map(i -> i * 2).toList();
        });
        Batcher<Integer, Integer> batcher = new Batcher<>(sender, i -> 1, 64, 1);
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
        assertThat(sender.maxInFlight.get()).isEqualTo(1);
        assertThat(sender.requests.get()).as("requests for 3200 inputs").isLessThan(3200);
    }

    @Test
    void withFourInFlight_fourThreadsArrivingTogether_eachSendsAtOnce_noneWaitsForAnother() throws Exception {
        int threads = 4;
        // A request stays out until every input is out: if any thread waited for another's request
        // to come back first, the inputs out would never reach four and the requests would time out.
        CountDownLatch allOut = new CountDownLatch(threads);
        AtomicInteger timedOut = new AtomicInteger();
        Batcher<Integer, Integer> batcher = new Batcher<>(inputs -> {
            inputs.forEach(i -> allOut.countDown());
            try {
                if (!allOut.await(30, TimeUnit.SECONDS)) {
                    timedOut.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            return inputs;
        }, i -> 1, 64, threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int input = t;
            futures.add(pool.submit(() -> {
                start.await();
                return batcher.submit(input);
            }));
        }
        for (int t = 0; t < threads; t++) {
            assertThat(futures.get(t).get(1, TimeUnit.MINUTES)).isEqualTo(t);
        }
        pool.shutdown();
        assertThat(timedOut.get()).as("requests that waited in vain for the other inputs to be out").isZero();
    }

    @Test
    void moreThreadsThanSlots_atMostMaxInFlight_requestsShared_andASenderAlwaysCarriesItsOwnInput() throws Exception {
        int threads = 16;
        int slots = 4;
        AtomicInteger withoutOwn = new AtomicInteger();
        CountingSender<long[], Long> sender = new CountingSender<>(inputs -> {
            // each input names the thread that submitted it: the sender must be one of them
            long sending = Thread.currentThread().getId();
            if (inputs.stream().noneMatch(in -> in[0] == sending)) {
                withoutOwn.incrementAndGet();
            }
            CountingSender.sleep(2);
            return inputs.stream().map(in -> in[1] * 2).toList();
        });
        Batcher<long[], Long> batcher = new Batcher<>(sender, in -> 1, 64, slots);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long base = t * 1000L;
            futures.add(pool.submit(() -> {
                int wrong = 0;
                for (long i = 0; i < 200; i++) {
                    if (batcher.submit(new long[]{Thread.currentThread().getId(), base + i}) != 2 * (base + i)) {
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
        assertThat(sender.maxInFlight.get()).isBetween(2, slots);
        assertThat(withoutOwn.get()).as("requests sent by a thread none of whose inputs they carried").isZero();
        assertThat(sender.requests.get()).as("requests for 3200 inputs").isLessThan(3200);
    }

    @Test
    void aFailedRequest_throwsToEveryThreadItCarried_andTheNextRequestWorks() {
        Batcher<String, String> batcher = new Batcher<>(inputs -> {
            if (inputs.contains("bad")) {
                throw new IllegalArgumentException("refused: " + inputs);
            }
            return inputs.stream().map(String::toUpperCase).toList();
        }, s -> 1, 8, 4);
        assertThatThrownBy(() -> batcher.submit("bad")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad");
        assertThat(batcher.submit("good")).isEqualTo("GOOD");
    }

    @Test
    void aSenderThatLosesAnswers_isAnErrorNotAWrongAnswer() {
        Batcher<String, String> batcher = new Batcher<>(inputs -> List.of(), s -> 1, 8, 4);
        assertThatThrownBy(() -> batcher.submit("x")).isInstanceOf(IllegalStateException.class).hasMessageContaining("answers");
    }
}
