package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Throughput, cancels and commit latency for the console's charts, read from the transactions
 * collection itself: every finished transaction is counted in the 10-second bucket of its commit
 * point ({@code committedAt}) or, canceled, of its last change, and timed from {@code startedAt}
 * (when it was asked for, queued time included) to {@code committedAt}. A console started at any
 * time reads the last day back from the collection (newest first, a few pages per round, at most
 * {@value #BACKFILL_MAX} transactions), then each round what changed since. Transactions stored
 * without those stamps (by older versions, or by an application that follows the tutorial) count
 * at their last change and are not timed. Thread-safe.
 */
final class ConsoleMetrics {
    static final Duration BUCKET = Duration.ofSeconds(10);
    static final Duration DAY = Duration.ofDays(1);
    static final Duration HOUR = Duration.ofHours(1);
    /** A change can become visible a little after the stamp it carries: each round reads this far back again. */
    private static final Duration OVERLAP = Duration.ofSeconds(10);
    private static final int PAGES_PER_ROUND = 20;
    static final int BACKFILL_MAX = 200_000;

    /** Counts and a latency histogram (bins 2^(i/4) ms wide) of one bucket. */
    private static final class Bucket {
        long committed;
        long canceled;
        /** Committed interactive transactions, the attempts they took in all, and the most one took. */
        long interactive;
        long attempts;
        long attemptsMax;
        long maxMs = -1;
        final int[] bins = new int[120];

        void merge(Bucket other) {
            committed += other.committed;
            canceled += other.canceled;
            interactive += other.interactive;
            attempts += other.attempts;
            attemptsMax = Math.max(attemptsMax, other.attemptsMax);
            maxMs = Math.max(maxMs, other.maxMs);
            for (int i = 0; i < bins.length; i++) {
                bins[i] += other.bins[i];
            }
        }

        void time(long ms) {
            maxMs = Math.max(maxMs, ms);
            bins[Math.min(bins.length - 1, (int) Math.floor(4 * Math.log(ms + 1.0) / Math.log(2)))]++;
        }

        /** The median latency, as the middle of its bin; null if none was timed. */
        Long medianMs() {
            long timed = 0;
            for (int b : bins) {
                timed += b;
            }
            long seen = 0;
            for (int i = 0; i < bins.length && timed > 0; i++) {
                seen += bins[i];
                if (seen * 2 >= timed) {
                    double low = Math.pow(2, i / 4.0) - 1;
                    double high = Math.pow(2, (i + 1) / 4.0) - 1;
                    return Math.min(maxMs, Math.round((low + high) / 2));
                }
            }
            return null;
        }
    }

    private final TransactionManager manager;
    private final TreeMap<Long, Bucket> buckets = new TreeMap<>();
    /** Finished transactions counted, by id, with their last change: each is counted once. */
    private final Map<Object, Instant> counted = new HashMap<>();
    /** The newest change read so far; each round reads from a little before it. */
    private Instant watermark;
    /** When this console read first: the day before it is read back once, the time after it round by round. */
    private Instant start;
    /** The reading of the day before this console started, newest first: where it stands, or null once done. */
    private TransactionQuery backfill;
    private Instant historyFrom;
    private int backfilled;

    ConsoleMetrics(TransactionManager manager) {
        this.manager = manager;
    }

    /** One round: what changed since the last, then a few more pages of the day before the console started. */
    synchronized void read(Instant now) {
        if (watermark == null) {
            start = now;
            watermark = now;
            historyFrom = now;
            backfill = finished().changedBetween(now.minus(DAY), now.plus(OVERLAP)).limit(TransactionQuery.MAX_LIMIT).build();
        }
        TransactionQuery recent = finished().changedBetween(watermark.minus(OVERLAP), null).limit(TransactionQuery.MAX_LIMIT).build();
        Instant newest = watermark;
        for (int page = 0; page < PAGES_PER_ROUND && recent != null; page++) {
            TransactionPage found = manager.list(recent);
            for (TransactionView tx : found.transactions()) {
                count(tx);
                if (tx.lastModified() != null && tx.lastModified().isAfter(newest)) {
                    newest = tx.lastModified();
                }
            }
            recent = found.more() ? recent.after(found.next()) : null;
        }
        watermark = newest;
        for (int page = 0; page < PAGES_PER_ROUND / 4 && backfill != null; page++) {
            TransactionPage found = manager.list(backfill);
            for (TransactionView tx : found.transactions()) {
                count(tx);
                if (tx.lastModified() != null && tx.lastModified().isBefore(historyFrom)) {
                    historyFrom = tx.lastModified();
                }
            }
            backfilled += found.transactions().size();
            backfill = found.more() && backfilled < BACKFILL_MAX ? backfill.after(found.next()) : null;
        }
        if (backfill == null && backfilled < BACKFILL_MAX) {
            historyFrom = now.minus(DAY); // read whole: the charts cover the day
        }
        forget(now);
    }

    private static TransactionQuery.Builder finished() {
        return TransactionQuery.builder().state(TransactionState.DONE).state(TransactionState.CANCELED);
    }

    private void count(TransactionView tx) {
        if (tx.lastModified() == null || counted.containsKey(tx.id())) {
            return;
        }
        counted.put(tx.id(), tx.lastModified());
        Instant committedAt = stamp(tx, "committedAt");
        boolean committed = tx.state() == TransactionState.DONE;
        Bucket bucket = buckets.computeIfAbsent(bucketOf(committed && committedAt != null ? committedAt : tx.lastModified()),
                k -> new Bucket());
        if (!committed) {
            bucket.canceled++;
            return;
        }
        bucket.committed++;
        if (tx.document().get("attempts") instanceof Number n && Boolean.TRUE.equals(tx.document().get("interactive"))) {
            bucket.interactive++;
            bucket.attempts += n.longValue();
            bucket.attemptsMax = Math.max(bucket.attemptsMax, n.longValue());
        }
        Instant startedAt = stamp(tx, "startedAt");
        if (startedAt != null && committedAt != null) {
            bucket.time(Math.max(0, Duration.between(startedAt, committedAt).toMillis()));
        }
    }

    private static Instant stamp(TransactionView tx, String field) {
        return tx.document().get(field) instanceof Date d ? d.toInstant() : null;
    }

    private static long bucketOf(Instant at) {
        long seconds = BUCKET.getSeconds();
        return Math.floorDiv(at.getEpochSecond(), seconds) * seconds;
    }

    /**
     * Drops buckets older than a day, and the ids of transactions no read can return again: older
     * than what each round reads back, and, while the day before the console started is still being
     * read, not near its start (the two readings overlap only there).
     */
    private void forget(Instant now) {
        buckets.headMap(bucketOf(now.minus(DAY))).clear();
        Instant readAgainFrom = watermark.minus(OVERLAP.multipliedBy(2));
        Instant bothRead = start.minus(OVERLAP.multipliedBy(2));
        counted.values().removeIf(changed -> changed.isBefore(readAgainFrom) && (backfill == null || changed.isBefore(bothRead)));
    }

    /**
     * {@code {"window","windowSeconds","bucketSeconds","historyFrom","periodSeconds","points":[{"at","committedPerSecond",
     * "canceledPerSecond","latencyP50Ms","latencyMaxMs"}],"interactive":{"committed","attemptsPerTransaction","attemptsMax"}}}
     * over the last {@code window} up to {@code now}, in buckets of {@code step} (a multiple of 10 s); a bucket with
     * nothing finished is a point of zeros and no latency. {@code interactive} sums the window's committed interactive
     * transactions and the attempts their bodies took (more than one: a conflict ran the body again).
     */
    synchronized ObjectNode series(String name, Duration window, Duration step, Instant now, Duration period) {
        ObjectNode root = Json.object();
        root.put("window", name);
        root.put("windowSeconds", window.toSeconds());
        root.put("bucketSeconds", step.toSeconds());
        root.put("periodSeconds", period.toMillis() / 1000.0);
        root.put("historyFrom", historyFrom == null ? null : historyFrom.toString());
        ArrayNode points = root.putArray("points");
        long stepSeconds = step.getSeconds();
        long end = Math.floorDiv(now.getEpochSecond(), stepSeconds) * stepSeconds;
        Bucket whole = new Bucket();
        for (long start = end - window.getSeconds() + stepSeconds; start <= end; start += stepSeconds) {
            Bucket sum = new Bucket();
            buckets.subMap(start, start + stepSeconds).values().forEach(sum::merge);
            whole.merge(sum);
            ObjectNode p = points.addObject();
            p.put("at", Instant.ofEpochSecond(start).toString());
            p.put("committedPerSecond", Math.round(sum.committed * 10.0 / stepSeconds) / 10.0);
            p.put("canceledPerSecond", Math.round(sum.canceled * 10.0 / stepSeconds) / 10.0);
            p.put("committed", sum.committed);
            p.put("canceled", sum.canceled);
            p.put("latencyP50Ms", sum.medianMs());
            p.put("latencyMaxMs", sum.maxMs < 0 ? null : sum.maxMs);
        }
        ObjectNode interactive = root.putObject("interactive");
        interactive.put("committed", whole.interactive);
        interactive.put("attemptsPerTransaction", whole.interactive == 0 ? null
                : Math.round(whole.attempts * 100.0 / whole.interactive) / 100.0);
        interactive.put("attemptsMax", whole.interactive == 0 ? null : whole.attemptsMax);
        return root;
    }
}
