package io.mongo2pc.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mongo2pc.ConflictKind;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionState;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Records mongo2pc's metrics in a Micrometer {@link MeterRegistry}:
 * <ul>
 *   <li>{@code mongo2pc.transactions.started}, {@code .committed}, {@code .canceled} (counters)</li>
 *   <li>{@code mongo2pc.transactions.recovered} (counter, tag {@code outcome}: done or canceled)</li>
 *   <li>{@code mongo2pc.takeovers}, {@code mongo2pc.conflicts}, {@code mongo2pc.lease.losses} (counters)</li>
 *   <li>{@code mongo2pc.commit.latency} (timer, from start or claim to {@code done})</li>
 *   <li>{@code mongo2pc.interactive.attempts} (distribution summary: how many times each interactive
 *       transaction's body ran) and {@code mongo2pc.interactive.conflicts} (counter, tag {@code kind}:
 *       changed, held or expired: attempts that lost and ran again or timed out)</li>
 *   <li>{@code mongo2pc.recovery.lag} (gauge, seconds the oldest open transaction has waited), once
 *       {@link #bindRecoveryLag} is called</li>
 * </ul>
 * Pass it to {@link TransactionManagerBuilder#metrics}. Thread-safe.
 */
public final class MicrometerTransactionMetrics implements TransactionMetrics {
    private final MeterRegistry registry;
    private final Counter started;
    private final Counter committed;
    private final Counter canceled;
    private final Counter recoveredDone;
    private final Counter recoveredCanceled;
    private final Counter takeovers;
    private final Counter conflicts;
    private final Counter leaseLosses;
    private final Timer commitLatency;
    private final DistributionSummary attempts;
    private final Map<ConflictKind, Counter> conflictsByKind = new EnumMap<>(ConflictKind.class);

    public MicrometerTransactionMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.started = Counter.builder("mongo2pc.transactions.started").description("transactions written").register(registry);
        this.committed = Counter.builder("mongo2pc.transactions.committed").description("transactions this process took to done").register(registry);
        this.canceled = Counter.builder("mongo2pc.transactions.canceled").description("transactions this process took to canceled").register(registry);
        this.recoveredDone = Counter.builder("mongo2pc.transactions.recovered").tag("outcome", "done").register(registry);
        this.recoveredCanceled = Counter.builder("mongo2pc.transactions.recovered").tag("outcome", "canceled").register(registry);
        this.takeovers = Counter.builder("mongo2pc.takeovers").description("stale transactions taken over").register(registry);
        this.conflicts = Counter.builder("mongo2pc.conflicts").description("claims, takeovers or writes lost to another process").register(registry);
        this.leaseLosses = Counter.builder("mongo2pc.lease.losses").description("transactions this process found taken over").register(registry);
        this.commitLatency = Timer.builder("mongo2pc.commit.latency").description("start or claim to done")
                .publishPercentiles(0.5, 0.99).register(registry);
        this.attempts = DistributionSummary.builder("mongo2pc.interactive.attempts").description("times each interactive transaction's body ran")
                .publishPercentiles(0.5, 0.99).register(registry);
        for (ConflictKind kind : ConflictKind.values()) {
            conflictsByKind.put(kind, Counter.builder("mongo2pc.interactive.conflicts").tag("kind", kind.name().toLowerCase(Locale.ROOT))
                    .description("attempts of interactive transactions that lost a conflict").register(registry));
        }
    }

    /** Adds the {@code mongo2pc.recovery.lag} gauge: one query of {@code manager} per read. */
    public MicrometerTransactionMetrics bindRecoveryLag(TransactionManager manager) {
        Gauge.builder("mongo2pc.recovery.lag", manager, m -> m.oldestOpen().toMillis() / 1000.0)
                .description("seconds the least recently changed open transaction has waited").baseUnit("seconds")
                .register(registry);
        return this;
    }

    @Override public void started() { started.increment(); }
    @Override public void committed(Duration latency) { committed.increment(); commitLatency.record(latency); }
    @Override public void canceled(String reason) { canceled.increment(); }
    @Override public void takeover() { takeovers.increment(); }
    @Override public void conflict() { conflicts.increment(); }
    @Override public void leaseLost() { leaseLosses.increment(); }
    @Override public void interactiveAttempts(int count) { attempts.record(count); }
    @Override public void interactiveConflict(ConflictKind kind) { conflictsByKind.get(kind).increment(); }

    @Override
    public void recovered(TransactionState outcome) {
        (outcome == TransactionState.DONE ? recoveredDone : recoveredCanceled).increment();
    }
}
