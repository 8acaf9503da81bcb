package io.mongo2pc.cli.bench;

import com.mongodb.client.MongoDatabase;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

/** The round trip to a server, measured with pings: what one sequential request costs at the least. */
final class RoundTrip {
    private static final int PINGS = 200;
    private static final long BUDGET_NANOS = 2_000_000_000L;

    private RoundTrip() { }

    /**
     * The median of up to 200 pings to {@code database} (fewer if they take more than 2 s in all,
     * at least 3), in milliseconds, after up to 100 not counted.
     */
    static double medianMs(MongoDatabase database) {
        Document ping = new Document("ping", 1);
        long start = System.nanoTime();
        for (int i = 0; i < PINGS / 2 && System.nanoTime() - start < BUDGET_NANOS / 4; i++) {
            database.runCommand(ping);
        }
        List<Long> trips = new ArrayList<>();
        start = System.nanoTime();
        while (trips.size() < PINGS && (trips.size() < 3 || System.nanoTime() - start < BUDGET_NANOS)) {
            long t0 = System.nanoTime();
            database.runCommand(ping);
            trips.add(System.nanoTime() - t0);
        }
        trips.sort(null);
        return trips.get(trips.size() / 2) / 1e6;
    }

    /** {@code ms} in round trips of {@code rttMs} (0 if the round trip is not known). */
    static double in(double ms, double rttMs) {
        return rttMs > 0 ? ms / rttMs : 0;
    }
}
