package io.mongo2pc.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

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
        // A server that works on one request at a time, 2 ms each: more requests out only queue.
        Object server = new Object();
        Shape busy = run(inputs -> {
            synchronized (server) {
                CountingSender.sleep(2);
            }
        });
        assertThat(busy.finalLimit).as("requests out at the end, busy server").isLessThanOrEqualTo(3);
        assertThat(busy.inputsPerRequest).as("inputs per request, busy server").isGreaterThan(3.0);

        // A server 10 ms away that is never busy: every request out costs nothing more.
        Shape distant = run(inputs -> CountingSender.sleep(10));
        assertThat(distant.finalLimit).as("requests out at the end, distant server").isEqualTo(8);
        assertThat(distant.maxInFlight).isEqualTo(8);
    }

    private record Shape(int finalLimit, int maxInFlight, double inputsPerRequest) { }

    private interface Server {
        void handle(List<Integer> inputs);
    }

    private static Shape run(Server server) throws Exception {
        CountingSender<Integer, Integer> sender = new CountingSender<>(inputs -> {
            server.handle(inputs);
            return inputs;
        });
        Batcher<Integer, Integer> batcher = new Batcher<>(sender, i -> 1, 64, 8);
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
        return new Shape(batcher.limit(), sender.maxInFlight.get(), (double) threads * perThread / sender.requests.get());
    }
}
