package io.mongo2pc.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Each transaction this process drives as one Micrometer {@link Observation} named
 * {@value #NAME}, so that tracing (Micrometer Tracing, OpenTelemetry) shows transactions as spans:
 * <ul>
 *   <li>started when this process writes the transaction (insert, claim) or takes it over;</li>
 *   <li>events {@code mongo2pc.commit-point} (the write {@code pending -> applied}) and
 *       {@code mongo2pc.takeover} (this process took a stale transaction over);</li>
 *   <li>stopped at {@code done} or {@code canceled}, with the key values {@code mongo2pc.outcome}
 *       ({@code committed}, {@code canceled}, or {@code unfinished}: this process stopped driving
 *       it, e.g. it lost its lease, was closed, or queued it for another process),
 *       {@code mongo2pc.state}, {@code mongo2pc.reason.code} (a {@link ReasonCode} or
 *       {@code none}), and the high-cardinality {@code mongo2pc.transaction.id} and
 *       {@code mongo2pc.operations}.</li>
 * </ul>
 * It follows the protocol's writes through the {@link CrashHook} the manager calls after each of
 * them ({@link TransactionManagerBuilder#crashHook}), then calls {@code next}; it never throws
 * into the protocol. A span started on a thread that has a current observation (an HTTP request)
 * is its child. Give it the manager ({@link #bind}) to read a canceled transaction's reason code
 * (one read per canceled transaction). Observations this process stops following end as
 * {@code unfinished} once older than {@code maxAge}, or at {@link #close()}. Thread-safe.
 */
public final class TransactionObservations implements CrashHook, AutoCloseable {
    public static final String NAME = "mongo2pc.transaction";
    public static final Observation.Event COMMIT_POINT =
            Observation.Event.of("mongo2pc.commit-point", "commit point: pending -> applied");
    public static final Observation.Event TAKEOVER =
            Observation.Event.of("mongo2pc.takeover", "taken over from an owner whose lease ran out");
    /** Default of {@code maxAge}: an observation not ended by then is closed as unfinished. */
    public static final Duration DEFAULT_MAX_AGE = Duration.ofMinutes(10);

    private static final Logger log = LoggerFactory.getLogger(TransactionObservations.class);
    private static final int RECENTLY_ENDED = 10_000;

    private final ObservationRegistry registry;
    private final CrashHook next;
    private final long maxAgeNanos;
    private final Map<Object, Traced> open = new ConcurrentHashMap<>();
    /**
     * Ids that ended here lately: running an id again (a caller's retry) writes nothing new and
     * returns the first outcome, so its insert or commit point must not start a second observation.
     */
    private final Set<Object> recentlyEnded = Collections.newSetFromMap(Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Object, Boolean> eldest) {
                    return size() > RECENTLY_ENDED;
                }
            }));
    private final AtomicLong nextSweep = new AtomicLong(System.nanoTime());
    private volatile TransactionManager manager;

    /** One transaction followed: its observation and what the hooks told of it so far. */
    private static final class Traced {
        final Observation observation;
        final long startedNanos = System.nanoTime();
        volatile TransactionState state = TransactionState.PENDING;
        volatile int operations;

        Traced(Observation observation) {
            this.observation = observation;
        }
    }

    public TransactionObservations(ObservationRegistry registry) {
        this(registry, CrashHook.NONE, DEFAULT_MAX_AGE);
    }

    /** Observations in {@code registry}; {@code next} is called after, at every point (e.g. a test's crash hook). */
    public TransactionObservations(ObservationRegistry registry, CrashHook next, Duration maxAge) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.next = Objects.requireNonNull(next, "next");
        if (maxAge == null || maxAge.isNegative() || maxAge.isZero()) {
            throw new IllegalArgumentException("maxAge must be positive, got " + maxAge);
        }
        this.maxAgeNanos = maxAge.toNanos();
    }

    /** The manager whose canceled transactions' reason codes are read; returns this. */
    public TransactionObservations bind(TransactionManager manager) {
        this.manager = Objects.requireNonNull(manager, "manager");
        return this;
    }

    @Override
    public void reached(CrashPoint point, Object transactionId) {
        if (transactionId != null && point.phase() == CrashPoint.Phase.AFTER) {
            try {
                record(point, transactionId);
            } catch (RuntimeException e) {
                log.debug("tracing of transaction {} at {} failed", transactionId, point, e);
            }
        }
        next.reached(point, transactionId);
    }

    /** How many transactions are being followed now. */
    public int following() {
        return open.size();
    }

    private void record(CrashPoint point, Object id) {
        switch (point.step()) {
            case INSERT -> {
                if (!recentlyEnded.contains(id)) {
                    start(id);
                }
            }
            case CLAIM -> start(id);
            case TAKEOVER -> start(id).observation.event(TAKEOVER);
            case COMMIT -> {
                // The first write of a two-round transaction committed by its document's insert; a
                // caller's retry of an id that ended here meets that document and commits nothing.
                if (recentlyEnded.contains(id) && !open.containsKey(id)) {
                    return;
                }
                Traced t = start(id);
                t.state = TransactionState.APPLIED;
                t.observation.event(COMMIT_POINT);
            }
            case BEGIN_CANCEL -> start(id).state = TransactionState.CANCELING;
            case FINISH -> stop(id, TransactionState.DONE, "committed", null);
            case FINISH_CANCEL -> stop(id, TransactionState.CANCELED, "canceled", canceled(id));
            case APPLY, RELEASE, UNDO -> {
                Traced t = open.get(id);
                if (t != null && point.participant() >= t.operations) {
                    t.operations = point.participant() + 1;
                }
            }
        }
    }

    private Traced start(Object id) {
        sweepIfDue();
        return open.computeIfAbsent(id, k -> new Traced(Observation.createNotStarted(NAME, registry)
                .contextualName("mongo2pc transaction")
                .highCardinalityKeyValue("mongo2pc.transaction.id", String.valueOf(k))
                .start()));
    }

    /** The reason code and operation count of a canceled transaction, read back (the hooks do not carry them). */
    private Optional<TransactionView> canceled(Object id) {
        TransactionManager m = manager;
        if (m == null || !open.containsKey(id)) {
            return Optional.empty();
        }
        try {
            return m.inspect(id);
        } catch (RuntimeException e) {
            log.debug("could not read canceled transaction {} for its reason code", id, e);
            return Optional.empty();
        }
    }

    private void stop(Object id, TransactionState state, String outcome, Optional<TransactionView> view) {
        Traced t = open.remove(id);
        if (t == null) {
            return;
        }
        if (state.isTerminal()) {
            recentlyEnded.add(id);
        }
        ReasonCode code = view == null ? null : view.map(TransactionView::reasonCode).orElse(null);
        int operations = view == null ? t.operations : view.map(v -> v.operations().size()).filter(n -> n > 0).orElse(t.operations);
        t.observation.lowCardinalityKeyValue("mongo2pc.outcome", outcome)
                .lowCardinalityKeyValue("mongo2pc.state", state.stored())
                .lowCardinalityKeyValue("mongo2pc.reason.code", code == null ? "none" : code.name())
                .highCardinalityKeyValue("mongo2pc.operations", String.valueOf(operations))
                .stop();
    }

    /** Ends, as unfinished, the observations older than the max age (cheap: at most once per quarter of it). */
    private void sweepIfDue() {
        long now = System.nanoTime();
        long due = nextSweep.get();
        if (now - due < 0 || !nextSweep.compareAndSet(due, now + maxAgeNanos / 4)) {
            return;
        }
        open.forEach((id, t) -> {
            if (now - t.startedNanos > maxAgeNanos) {
                stop(id, t.state, "unfinished", null);
            }
        });
    }

    /** Ends every observation still open as unfinished (at shutdown, after the manager closed). */
    @Override
    public void close() {
        open.forEach((id, t) -> stop(id, t.state, "unfinished", null));
    }
}
