package io.mongo2pc.internal.wire;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The number of combined requests out at once follows their round trips: all the allowed ones
 * while round trips are network latency, down to one (the most combining) while they are work that
 * queues.
 */
class InFlightLimitTest {
    private static final long MS = 1_000_000;

    @Test
    void roundTripsWithinTwiceTheFastest_raiseTheLimitToItsMax_slowerOnesLowerItToOne() {
        InFlightLimit limit = new InFlightLimit(4);
        assertThat(limit.get()).as("a lone request goes out at once").isEqualTo(4);
        limit.roundTrip(MS);
        limit.roundTrip(2 * MS);
        assertThat(limit.get()).as("never above the max").isEqualTo(4);
        for (int i = 0; i < 2; i++) {
            limit.roundTrip(3 * MS);
        }
        assertThat(limit.get()).isEqualTo(2);
        for (int i = 0; i < 5; i++) {
            limit.roundTrip(3 * MS);
        }
        assertThat(limit.get()).as("never below one").isEqualTo(1);
        limit.roundTrip(MS + MS / 2);
        assertThat(limit.get()).isEqualTo(2);
        // a faster round trip is the new yardstick at once
        limit.roundTrip(MS / 4);
        limit.roundTrip(MS);
        assertThat(limit.get()).isEqualTo(2);
        assertThatThrownBy(() -> new InFlightLimit(0)).hasMessageContaining("at least 1, got 0");
    }

    @Test
    void aBusyServer_makesThreadsShareFewRequests_aDistantOne_getsAllRequestsOut() throws Exception {
        // A server that works on one request at a time, 2 ms each, in the order they came (as a
        // server's queue does; an unfair lock would serve some at once and starve others): more
        // requests out only queue.
        ReentrantLock server = new ReentrantLock(true);
        Shape busy = run(inputs -> {
            server.lock();
            try {
                CountingSender.sleep(2);
            } finally {
                server.unlock();
            }
        });
        assertThat(busy.medianLimit).as("requests allowed out while all threads run, busy server").isLessThanOrEqualTo(3);
        assertThat(busy.inputsPerRequest).as("inputs per request, busy server").isGreaterThan(3.0);

        // A server 40 ms away that is never busy: every request out costs nothing more. (A round trip
        // that scheduling on a loaded machine delays by more than the distance counts as queued and
        // lowers the limit: the distance is that margin, and 10 ms was a thin one.)
        Shape distant = run(inputs -> CountingSender.sleep(40));
        assertThat(distant.medianLimit).as("requests allowed out while all threads run, distant server").isEqualTo(8);
        assertThat(distant.maxInFlight).isEqualTo(8);
    }

    /**
     * The median of the limit read as each request goes out: the limit at the end of a run says
     * little, since as the threads finish the queue drains and round trips get fast again.
     */
    private record Shape(int medianLimit, int maxInFlight, double inputsPerRequest) { }

    private interface Server {
        void handle(List<Integer> inputs);
    }

    private static Shape run(Server server) throws Exception {
        AtomicReference<Batcher<Integer, Integer>> self = new AtomicReference<>();
        List<Integer> limits = Collections.synchronizedList(new ArrayList<>());
        CountingSender<Integer, Integer> sender = new CountingSender<>(inputs -> {
            limits.add(self.get().limit());
            server.handle(inputs);
            return inputs;
        });
        Batcher<Integer, Integer> batcher = new Batcher<>(sender, i -> 1, 64, 8);
        self.set(batcher);
        int threads = 16;
        int perThread = 60;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            futures.add(pool.submit(() -> {
                for (int i = 0; i < perThread; i++) {
                    batcher.submit(i);
                }
                return null;
            }));
        }
        for (Future<?> f : futures) {
            f.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
        List<Integer> sorted = new ArrayList<>(limits);
        Collections.sort(sorted);
        return new Shape(sorted.get(sorted.size() / 2), sender.maxInFlight.get(), (double) threads * perThread / sender.requests.get());
    }
}
