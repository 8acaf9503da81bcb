package io.mongo2pc.spring;

import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.bank.Payments;
import io.mongo2pc.micrometer.MicrometerTransactionMetrics;
import io.mongo2pc.micrometer.TransactionObservations;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/** The manager, bank, meters and traces the starter defines, from each property, and its back-off. */
class Mongo2pcAutoConfigurationTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private ApplicationContextRunner runner() {
        MongoClient client = mongo.newClient();
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(Mongo2pcAutoConfiguration.class, Mongo2pcActuatorAutoConfiguration.class))
                .withBean(MongoClient.class, () -> client)
                .withPropertyValues("mongo2pc.database=" + mongo.database());
    }

    @Test
    void eachProperty_bindsToItsBuilderSetting() {
        runner().withPropertyValues(
                "mongo2pc.application=payments",
                "mongo2pc.transactions-collection=tx",
                "mongo2pc.lease=7s",
                "mongo2pc.max-clock-skew=2s",
                "mongo2pc.retry-timeout=11s",
                "mongo2pc.conflict-timeout=3s",
                "mongo2pc.max-operations=12",
                "mongo2pc.max-markers=13",
                "mongo2pc.write-concern=w1",
                "mongo2pc.read-concern=local",
                "mongo2pc.combined-requests-in-flight=4",
                "mongo2pc.finishing=inline",
                "mongo2pc.finish-linger=20ms",
                "mongo2pc.sweep-period=45s",
                "mongo2pc.two-round-commit=false",
                "mongo2pc.targets.shop=" + mongo.uri()).run(context -> {
            TransactionManagerSettings s = context.getBean(TransactionManager.class).settings();
            assertThat(s.database()).isEqualTo(mongo.database());
            assertThat(s.application()).isEqualTo("payments");
            assertThat(s.transactionsCollection()).isEqualTo("tx");
            assertThat(s.lease()).isEqualTo(Duration.ofSeconds(7));
            assertThat(s.maxClockSkew()).isEqualTo(Duration.ofSeconds(2));
            assertThat(s.retryTimeout()).isEqualTo(Duration.ofSeconds(11));
            assertThat(s.conflictTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(s.maxOperations()).isEqualTo(12);
            assertThat(s.maxMarkers()).isEqualTo(13);
            assertThat(s.writeConcern()).isEqualTo(WriteConcern.W1);
            assertThat(s.readConcern()).isEqualTo(ReadConcern.LOCAL);
            assertThat(s.combinedRequestsInFlight()).isEqualTo(4);
            assertThat(s.finishInBackground()).isFalse();
            assertThat(s.finishLinger()).isEqualTo(Duration.ofMillis(20));
            assertThat(s.sweepPeriod()).isEqualTo(Duration.ofSeconds(45));
            assertThat(s.twoRoundCommit()).isFalse();
            assertThat(s.target("default")).isSameAs(context.getBean(MongoClient.class));
            assertThat(s.target("shop")).isNotNull().isNotSameAs(s.target("default"));
            assertThat(context).hasSingleBean(Bank.class).hasSingleBean(Payments.class).doesNotHaveBean(Mongo2pcWorker.class);
        });
    }

    @Test
    void defaults_areTheBuilders() {
        runner().run(context -> {
            TransactionManagerSettings s = context.getBean(TransactionManager.class).settings();
            assertThat(s.application()).isEqualTo("mongo2pc");
            assertThat(s.lease()).isEqualTo(Duration.ofSeconds(30));
            assertThat(s.maxClockSkew()).isEqualTo(TransactionManagerSettings.DEFAULT_MAX_CLOCK_SKEW);
            assertThat(s.writeConcern()).isEqualTo(WriteConcern.MAJORITY);
            assertThat(s.readConcern()).isEqualTo(ReadConcern.MAJORITY);
            assertThat(s.combinedRequestsInFlight()).isEqualTo(TransactionManagerBuilder.DEFAULT_COMBINED_REQUESTS_IN_FLIGHT);
            assertThat(s.finishInBackground()).isTrue();
            assertThat(s.twoRoundCommit()).isTrue();
            assertThat(s.tutorialRulesFallback()).isTrue();
            assertThat(s.finishLinger()).isEqualTo(TransactionManagerBuilder.DEFAULT_FINISH_LINGER);
            assertThat(s.sweepPeriod()).as("the lease").isEqualTo(Duration.ofSeconds(30));
        });
    }

    @Test
    void badValues_stopTheApplication_namingTheProperty() {
        runner().withPropertyValues("mongo2pc.lease=-1s").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("mongo2pc.lease=PT-1S is refused: lease must be positive"));
        runner().withPropertyValues("mongo2pc.write-concern=unacknowledged").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("mongo2pc.write-concern")
                .hasMessageContaining("an unacknowledged write concern cannot carry a transaction"));
        runner().withPropertyValues("mongo2pc.read-concern=strong").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("unknown read concern 'strong'"));
        runner().withPropertyValues("mongo2pc.targets.shop=http://shop").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("mongo2pc.targets.shop is not a MongoDB connection string"));
        runner().withPropertyValues("mongo2pc.worker.enabled=true", "mongo2pc.worker.threads=0").run(context ->
                assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("mongo2pc.worker.threads must be between 1 and 256, got 0"));
        assertThat(mongo.client().listDatabaseNames().into(new java.util.ArrayList<>())).doesNotContain(mongo.database());
    }

    @Test
    void withoutAMongoClient_itSaysWhatToSet_orUsesTargetsDefault() {
        ApplicationContextRunner noClient = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(Mongo2pcAutoConfiguration.class))
                .withPropertyValues("mongo2pc.database=" + mongo.database());
        noClient.run(context -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining(
                "mongo2pc needs a MongoClient for its transactions collection: set spring.mongodb.uri, define a MongoClient bean, or set mongo2pc.targets.default"));
        noClient.withPropertyValues("mongo2pc.targets.default=" + mongo.uri()).run(context -> {
            assertThat(context).hasNotFailed();
            Bank bank = context.getBean(Bank.class);
            bank.createAccount("A", 5L);
            assertThat(bank.list()).hasSize(1);
        });
        mongo.invariants().expectTotal(mongo.database(), 5L);
    }

    @Test
    void backsOff_whenTheApplicationDefinesItsOwnBeans() {
        String mine = mongo.database() + "_mine";
        runner().withBean("mine", TransactionManager.class, () -> Bank.configure(TransactionManager.builder()
                .target("default", mongo.client()).database(mine)).build()).run(context -> {
            assertThat(context).hasSingleBean(TransactionManager.class).hasBean("mine");
            assertThat(context.getBean(Bank.class).accounts().getNamespace().getDatabaseName()).isEqualTo(mine);
            assertThat(context).hasSingleBean(Mongo2pcHealthIndicator.class);
        });
        runner().withBean("myBank", Bank.class, () -> new Bank(Bank.configure(TransactionManager.builder()
                .target("default", mongo.client()).database(mine)).build())).run(context -> assertThat(context)
                .hasBean("myBank").getBeans(Bank.class).hasSize(1));
        runner().withPropertyValues("mongo2pc.bank.enabled=false").run(context -> assertThat(context)
                .hasSingleBean(TransactionManager.class).doesNotHaveBean(Bank.class).doesNotHaveBean(Payments.class));
    }

    @Test
    void meters_andObservations_ofTheApplicationsRegistries() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(ObservationRegistry.class, () -> observations).run(context -> {
            assertThat(context).hasSingleBean(MicrometerTransactionMetrics.class).hasSingleBean(TransactionObservations.class);
            Bank bank = context.getBean(Bank.class);
            bank.createAccount("A", 100L);
            bank.createAccount("B", 0L);
            bank.transfer("t-1", "A", "B", 10L);
            // counted once done: by default the manager's finisher thread finishes it after the call returned
            assertThat(context.getBean(TransactionManager.class).awaitFinished(Duration.ofSeconds(30))).isTrue();
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("mongo2pc.transactions.committed").counter().count()).isEqualTo(1.0);
            assertThat(meters.get("mongo2pc.recovery.lag").gauge().value()).isZero();
            assertThat(observations).hasSingleObservationThat().hasNameEqualTo(TransactionObservations.NAME)
                    .hasHighCardinalityKeyValue("mongo2pc.transaction.id", "t-1")
                    .hasLowCardinalityKeyValue("mongo2pc.outcome", "committed");
        });
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new).withBean(ObservationRegistry.class, () -> observations)
                .withPropertyValues("mongo2pc.metrics.enabled=false", "mongo2pc.tracing.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(MicrometerTransactionMetrics.class)
                        .doesNotHaveBean(TransactionObservations.class));
        mongo.invariants().expectTotal(mongo.database(), 100L);
    }
}
