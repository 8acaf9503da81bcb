package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Reads the database once per period for the console: the status (served to every page as is,
 * so many pages cost the database one read per period), the charts' history
 * ({@link ConsoleMetrics}, from the transactions collection) and the warnings
 * ({@link ConsoleWarnings}). The last failure to read is kept and shown as a banner; the next
 * round tries again. Thread-safe.
 */
final class ConsoleSampler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConsoleSampler.class);

    private final Session session;
    private final Duration period;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mongo2pc-console-sampler");
        t.setDaemon(true);
        return t;
    });
    private final ConsoleHistory history = new ConsoleHistory();
    private final ConsoleMetrics metrics;
    private final ConsoleWarnings warnings;

    private volatile StatusReport status;
    private volatile List<ConsoleWarnings.Warning> warned = List.of();
    private volatile String failure;

    ConsoleSampler(Session session, Duration period, Duration lease) {
        this.session = session;
        this.period = period;
        this.metrics = new ConsoleMetrics(session.manager());
        this.warnings = new ConsoleWarnings(session, lease);
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

    /** The charts over the last hour ({@code "hour"}, 10-second points) or day ({@code "day"}, 5-minute points). */
    ObjectNode series(String window) {
        Instant now = session.manager().serverTime();
        if (window == null || window.isBlank() || window.equals("hour")) {
            return metrics.series("hour", ConsoleMetrics.HOUR, ConsoleMetrics.BUCKET, now, period);
        }
        if (window.equals("day")) {
            return metrics.series("day", ConsoleMetrics.DAY, Duration.ofMinutes(5), now, period);
        }
        throw ConsoleError.badRequest("window must be hour or day, got '" + window + "'");
    }

    /** {@code {"warnings":[{"kind","count","message","ids"}]}} as of the last round. */
    ObjectNode warnings() {
        status(); // 503 while the database cannot be read
        return ConsoleWarnings.json(warned);
    }

    private void round() {
        try {
            status = StatusReport.read(session);
            failure = null;
            Instant now = session.manager().serverTime();
            metrics.read(now);
            warned = warnings.read(now);
        } catch (RuntimeException e) {
            String why = ConsoleServer.databaseProblem(e);
            if (!why.equals(failure)) {
                log.warn("{}", why);
            }
            failure = why;
        }
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
