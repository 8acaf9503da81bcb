package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Reads the database once per period for the console: the status (served to every page as is,
 * so many pages cost the database one read per period), throughput from the change of the counts,
 * and commit latency of the transactions it saw open. The last failure to read is kept and shown
 * as a banner; the next round tries again. Thread-safe.
 */
final class ConsoleSampler implements AutoCloseable {
    /** How much history the charts show. */
    static final Duration WINDOW = Duration.ofMinutes(5);
    private static final int OBSERVED = 500;
    private static final Logger log = LoggerFactory.getLogger(ConsoleSampler.class);

    private record Sample(Instant at, double committedPerSecond, double canceledPerSecond, Long p50Ms, Long maxMs) { }

    private final Session session;
    private final Duration period;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mongo2pc-console-sampler");
        t.setDaemon(true);
        return t;
    });
    private final Deque<Sample> samples = new ArrayDeque<>();
    private final ConsoleHistory history = new ConsoleHistory();
    /** When each open transaction the sampler saw was first stamped: the start of its commit latency. */
    private final Map<Object, Instant> openSince = new LinkedHashMap<>();

    private volatile StatusReport status;
    private volatile String failure;
    private Instant lastRound;
    private long lastCommitted = -1;
    private long lastCanceled = -1;

    ConsoleSampler(Session session, Duration period) {
        this.session = session;
        this.period = period;
    }

    void start() {
        timer.scheduleWithFixedDelay(this::round, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    ConsoleHistory history() {
        return history;
    }

    /** The last status read; throws a 503 while the database cannot be read. */
    StatusReport status() {
        String why = failure;
        StatusReport last = status;
        if (why != null || last == null) {
            throw new ConsoleError(503, "DATABASE_UNAVAILABLE", why != null ? why : "the first reading of the database is not done yet");
        }
        return last;
    }

    /** {@code {"periodSeconds","points":[{"at","committedPerSecond","canceledPerSecond","latencyP50Ms","latencyMaxMs"}]}}. */
    synchronized ObjectNode series() {
        ObjectNode root = Json.object();
        root.put("periodSeconds", period.toMillis() / 1000.0);
        root.put("windowSeconds", WINDOW.toSeconds());
        ArrayNode points = root.putArray("points");
        for (Sample s : samples) {
            ObjectNode p = points.addObject();
            p.put("at", s.at().toString());
            p.put("committedPerSecond", Math.round(s.committedPerSecond() * 10) / 10.0);
            p.put("canceledPerSecond", Math.round(s.canceledPerSecond() * 10) / 10.0);
            p.put("latencyP50Ms", s.p50Ms());
            p.put("latencyMaxMs", s.maxMs());
        }
        return root;
    }

    private void round() {
        try {
            StatusReport report = StatusReport.read(session);
            Instant now = session.manager().serverTime();
            List<Long> latencies = commitLatencies(now);
            record(report, now, latencies);
            status = report;
            failure = null;
        } catch (RuntimeException e) {
            String why = ConsoleServer.databaseProblem(e);
            if (!why.equals(failure)) {
                log.warn("{}", why);
            }
            failure = why;
        }
    }

    private synchronized void record(StatusReport report, Instant now, List<Long> latencies) {
        long committed = report.counts().getOrDefault(TransactionState.APPLIED, 0L) + report.counts().getOrDefault(TransactionState.DONE, 0L);
        long canceled = report.counts().getOrDefault(TransactionState.CANCELED, 0L);
        if (lastRound != null && lastCommitted >= 0) {
            double seconds = Math.max(0.001, Duration.between(lastRound, now).toMillis() / 1000.0);
            // a prune deletes finished transactions: a count that fell says nothing about the rate
            double committedRate = Math.max(0, committed - lastCommitted) / seconds;
            double canceledRate = Math.max(0, canceled - lastCanceled) / seconds;
            Collections.sort(latencies);
            samples.addLast(new Sample(now, committedRate, canceledRate,
                    latencies.isEmpty() ? null : latencies.get(latencies.size() / 2),
                    latencies.isEmpty() ? null : latencies.get(latencies.size() - 1)));
            while (!samples.isEmpty() && samples.peekFirst().at().isBefore(now.minus(WINDOW))) {
                samples.removeFirst();
            }
        }
        lastRound = now;
        lastCommitted = committed;
        lastCanceled = canceled;
    }

    /**
     * Notes when the newest open transactions were first stamped, and measures, for those that
     * committed since the last round, the time from that stamp to their commit's. Transactions that
     * begin and commit between two rounds are counted in the throughput but not timed here.
     */
    private List<Long> commitLatencies(Instant now) {
        TransactionPage open = session.manager().list(TransactionQuery.builder().state(TransactionState.INITIAL)
                .state(TransactionState.PENDING).limit(OBSERVED).build());
        TransactionPage committed = session.manager().list(TransactionQuery.builder().state(TransactionState.APPLIED)
                .state(TransactionState.DONE).limit(OBSERVED).build());
        List<Long> latencies = new ArrayList<>();
        synchronized (openSince) {
            for (TransactionView tx : open.transactions()) {
                history.saw(tx.id(), TransactionRows.stateText(tx), tx.lastModified());
                if (tx.lastModified() != null) {
                    openSince.putIfAbsent(tx.id(), tx.lastModified());
                }
            }
            for (TransactionView tx : committed.transactions()) {
                Instant since = openSince.remove(tx.id());
                if (since != null && tx.lastModified() != null) {
                    history.saw(tx.id(), TransactionRows.stateText(tx), tx.lastModified());
                    latencies.add(Math.max(0, Duration.between(since, tx.lastModified()).toMillis()));
                }
            }
            openSince.values().removeIf(since -> since.isBefore(now.minus(WINDOW.multipliedBy(2))));
            while (openSince.size() > 20 * OBSERVED) {
                openSince.remove(openSince.keySet().iterator().next());
            }
        }
        return latencies;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
