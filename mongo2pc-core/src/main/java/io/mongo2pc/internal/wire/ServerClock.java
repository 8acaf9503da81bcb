package io.mongo2pc.internal.wire;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.internal.format.Fields;
import org.bson.Document;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;

/**
 * The database server's clock. Leases are judged only by it, never by comparing the clocks of
 * application hosts: a stamp written with {@code $currentDate} is read back, which every
 * MongoDB-compatible server supports.
 * Thread-safe.
 * Public for the admin, tutorial, tworound and recovery packages and Engine, as are the members they use.
 */
public final class ServerClock {
    private static final String CLOCK_ID = "mongo2pc-clock";
    /** How long one reading of the server's clock serves {@link #lowerBound()}. */
    private static final long READING_NANOS = 1_000_000_000L;

    /** The server's time as read, the local time its reply arrived and the local time its request was sent. */
    private record Reading(Instant server, long localNanos, long sentNanos, long sentWallMillis) { }

    private final MongoCollection<Document> clocks;
    private volatile Reading reading;

    public ServerClock(MongoCollection<Document> clocks) {
        this.clocks = clocks;
    }

    public Instant now() {
        Document stamp = clocks.findOneAndUpdate(
                new Document(Fields.ID, CLOCK_ID),
                new Document("$currentDate", new Document("now", true)),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
        Date now = stamp == null ? null : stamp.getDate("now");
        if (now == null) {
            throw new IllegalStateException("the server did not return its time from $currentDate");
        }
        return now.toInstant();
    }

    /**
     * A time the server's clock has certainly reached by now: the last reading of it (at most a
     * second old) plus the time this host's monotonic clock measured since that reading's reply
     * arrived, cut to the millisecond. A write sent after this call is stamped by the server with
     * a time no earlier than this, so a lease computed from it never outlasts the real one. This
     * assumes the server's clock does not run slower than this host's over a second (it may drift
     * by parts per million; the clock skew allowance covers far more).
     */
    public Instant lowerBound() {
        Reading r = reading;
        if (r == null || System.nanoTime() - r.localNanos() > READING_NANOS) {
            r = refresh();
        }
        return boundFrom(r);
    }

    /**
     * Like {@link #lowerBound()} but from the last reading however old it is, without asking the
     * server (which may be unreachable); null if there was none. Good for waiting: the server's
     * clock drifts from this host's by parts per million, far less than the clock skew allowance.
     */
    public Instant lastBound() {
        Reading r = reading;
        return r == null ? null : boundFrom(r);
    }

    /**
     * A time the server's clock has certainly not passed yet: the last reading of it (null if there
     * was none) plus the time this host's monotonic clock measured since that reading's request was
     * sent, plus the millisecond the reading was cut to, rounded up to the millisecond. A write answered before this call ran on the
     * server before this time. Like {@link #lowerBound()} this assumes the server's clock does not
     * run faster than this host's by more than the clock skew allowance covers. The time elapsed is
     * the larger of the monotonic clock's and the wall clock's: the monotonic clock may stand still
     * while the host or its virtual machine is suspended, and a bound too early would let an owner
     * take a late commit for one in time (a bound too late only costs a read back).
     */
    public Instant upperBound() {
        Reading r = reading;
        if (r == null) {
            return null;
        }
        long wallElapsed = Math.max(0, System.currentTimeMillis() - r.sentWallMillis()) * 1_000_000L;
        long elapsed = Math.max(wallElapsed, Math.max(0, System.nanoTime() - r.sentNanos()));
        Instant bound = r.server().plusMillis(1).plusNanos(elapsed);
        Instant cut = bound.truncatedTo(ChronoUnit.MILLIS);
        return cut.equals(bound) ? cut : cut.plusMillis(1);
    }

    /** The reading's server time plus the monotonic time elapsed since it arrived, cut to the millisecond. */
    private static Instant boundFrom(Reading r) {
        long elapsed = Math.max(0, System.nanoTime() - r.localNanos());
        return r.server().plusNanos(elapsed).truncatedTo(ChronoUnit.MILLIS);
    }

    private synchronized Reading refresh() {
        Reading r = reading;
        if (r != null && System.nanoTime() - r.localNanos() <= READING_NANOS) {
            return r;
        }
        long sentWall = System.currentTimeMillis();
        long sent = System.nanoTime();
        Instant server = now();
        r = new Reading(server, System.nanoTime(), sent, sentWall);
        reading = r;
        return r;
    }
}
