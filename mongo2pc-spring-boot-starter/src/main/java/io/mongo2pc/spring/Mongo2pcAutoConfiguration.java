package io.mongo2pc.spring;

import com.mongodb.ReadConcern;
import com.mongodb.ReadConcernLevel;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.bank.Payments;
import io.mongo2pc.micrometer.MicrometerTransactionMetrics;
import io.mongo2pc.micrometer.TransactionObservations;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Locale;
import java.util.Map;

/**
 * Defines a {@link TransactionManager} on the application's MongoClient (and named targets), a
 * {@link Bank} and {@link Payments} on it, Micrometer meters and observations when the application
 * has their registries, and an optional in-process {@link Mongo2pcWorker}; each only if the
 * application does not define its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass({TransactionManager.class, MongoClient.class})
@EnableConfigurationProperties(Mongo2pcProperties.class)
public class Mongo2pcAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Mongo2pcTargets mongo2pcTargets(Mongo2pcProperties properties, ObjectProvider<MongoClient> applicationClient) {
        return new Mongo2pcTargets(properties.getTargets().containsKey("default") ? null : applicationClient.getIfUnique(),
                properties.getTargets());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public TransactionManager mongo2pcManager(Mongo2pcProperties properties, Mongo2pcTargets targets,
                                                         ObjectProvider<TransactionMetrics> metrics,
                                                         ObjectProvider<TransactionObservations> observations,
                                                         ObjectProvider<TransactionManagerCustomizer> customizers) {
        TransactionManagerBuilder builder = Bank.configure(TransactionManager.builder());
        targets.clients().forEach(builder::target);
        apply(properties, builder);
        TransactionMetrics meters = metrics.getIfUnique();
        if (meters != null) {
            builder.metrics(meters);
        }
        TransactionObservations traces = observations.getIfUnique();
        if (traces != null) {
            builder.crashHook(traces);
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        TransactionManager manager = builder.build();
        if (traces != null) {
            traces.bind(manager);
        }
        if (meters instanceof MicrometerTransactionMetrics micrometer) {
            micrometer.bindRecoveryLag(manager);
        }
        return manager;
    }

    /** Every {@code mongo2pc.*} setting of the builder; a value the builder refuses names its property. */
    static void apply(Mongo2pcProperties p, TransactionManagerBuilder b) {
        setting("mongo2pc.database", p.getDatabase(), () -> b.database(p.getDatabase()));
        setting("mongo2pc.application", p.getApplication(), () -> b.application(p.getApplication()));
        setting("mongo2pc.transactions-collection", p.getTransactionsCollection(),
                () -> b.transactionsCollection(p.getTransactionsCollection()));
        setting("mongo2pc.lease", p.getLease(), () -> b.lease(p.getLease()));
        if (p.getMaxClockSkew() != null) {
            setting("mongo2pc.max-clock-skew", p.getMaxClockSkew(), () -> b.maxClockSkew(p.getMaxClockSkew()));
        }
        setting("mongo2pc.retry-timeout", p.getRetryTimeout(), () -> b.retryTimeout(p.getRetryTimeout()));
        setting("mongo2pc.conflict-timeout", p.getConflictTimeout(), () -> b.conflictTimeout(p.getConflictTimeout()));
        setting("mongo2pc.max-operations", p.getMaxOperations(), () -> b.maxOperations(p.getMaxOperations()));
        setting("mongo2pc.max-markers", p.getMaxMarkers(), () -> b.maxMarkers(p.getMaxMarkers()));
        setting("mongo2pc.write-concern", p.getWriteConcern(), () -> b.writeConcern(writeConcern(p.getWriteConcern())));
        setting("mongo2pc.read-concern", p.getReadConcern(), () -> b.readConcern(readConcern(p.getReadConcern())));
        setting("mongo2pc.combined-requests-in-flight", p.getCombinedRequestsInFlight(),
                () -> b.combinedRequestsInFlight(p.getCombinedRequestsInFlight()));
        b.finishInBackground(p.getFinishing() == Mongo2pcProperties.Finishing.BACKGROUND);
        setting("mongo2pc.finish-linger", p.getFinishLinger(), () -> b.finishLinger(p.getFinishLinger()));
        if (p.getTwoRoundCommit() != null) {
            b.twoRoundCommit(p.getTwoRoundCommit());
        }
        if (p.getSweepPeriod() != null) {
            setting("mongo2pc.sweep-period", p.getSweepPeriod(), () -> b.sweepPeriod(p.getSweepPeriod()));
        }
    }

    private static void setting(String property, Object value, Runnable apply) {
        try {
            apply.run();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(property + "=" + value + " is refused: " + e.getMessage());
        }
    }

    private static final Map<String, WriteConcern> WRITE_CONCERNS = Map.of("majority", WriteConcern.MAJORITY,
            "w1", WriteConcern.W1, "w2", WriteConcern.W2, "w3", WriteConcern.W3,
            "acknowledged", WriteConcern.ACKNOWLEDGED, "journaled", WriteConcern.JOURNALED,
            "unacknowledged", WriteConcern.UNACKNOWLEDGED);

    static WriteConcern writeConcern(String name) {
        WriteConcern concern = name == null ? null : WRITE_CONCERNS.get(name.trim().toLowerCase(Locale.ROOT));
        if (concern == null) {
            throw new IllegalArgumentException("unknown write concern '" + name + "'; use majority, w1, w2, w3, acknowledged or journaled");
        }
        return concern;
    }

    static ReadConcern readConcern(String name) {
        String level = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        if (level.equals("default")) {
            return ReadConcern.DEFAULT;
        }
        try {
            return new ReadConcern(ReadConcernLevel.fromString(level));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown read concern '" + name
                    + "'; use majority, local, linearizable, snapshot, available or default");
        }
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "mongo2pc.bank.enabled", matchIfMissing = true)
    public Bank mongo2pcBank(TransactionManager manager) {
        return new Bank(manager);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "mongo2pc.bank.enabled", matchIfMissing = true)
    public Payments mongo2pcPayments(TransactionManager manager) {
        return new Payments(manager);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "mongo2pc.worker.enabled")
    public Mongo2pcWorker mongo2pcWorker(TransactionManager manager, Mongo2pcProperties properties) {
        return new Mongo2pcWorker(manager, properties.getWorker().getThreads(), properties.getWorker().getScanPeriod());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "mongo2pc.metrics.enabled", matchIfMissing = true)
    static class MetricsConfiguration {
        @Bean
        @ConditionalOnMissingBean(TransactionMetrics.class)
        MicrometerTransactionMetrics mongo2pcMetrics(MeterRegistry registry) {
            return new MicrometerTransactionMetrics(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "mongo2pc.tracing.enabled", matchIfMissing = true)
    static class TracingConfiguration {
        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        TransactionObservations mongo2pcObservations(ObservationRegistry registry, Mongo2pcProperties properties) {
            return new TransactionObservations(registry, CrashHook.NONE, properties.getTracing().getMaxAge());
        }
    }
}
