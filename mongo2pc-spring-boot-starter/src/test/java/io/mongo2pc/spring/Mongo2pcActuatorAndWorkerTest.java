package io.mongo2pc.spring;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The health indicator (up, down when stale, down when unreachable), the status endpoint, and the in-process worker. */
class Mongo2pcActuatorAndWorkerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private ApplicationContextRunner runner(MongoClient client) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(Mongo2pcAutoConfiguration.class, Mongo2pcActuatorAutoConfiguration.class))
                .withBean(MongoClient.class, () -> client)
                .withPropertyValues("mongo2pc.database=" + mongo.database(), "management.endpoints.web.exposure.include=mongo2pc");
    }

    private static final TransactionManagerCustomizer CRASH_AFTER_COMMIT = builder -> builder.crashHook((point, id) -> {
        if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
            throw new IllegalStateException("crash");
        }
    });

    @Test
    void health_isDown_whileATransactionIsStaleBeyondTwiceItsLease_andUpOnceRecovered() {
        runner(mongo.newClient()).withBean(TransactionManagerCustomizer.class, () -> CRASH_AFTER_COMMIT).run(context -> {
            Mongo2pcHealthIndicator health = context.getBean(Mongo2pcHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            Bank bank = context.getBean(Bank.class);
            bank.createAccount("A", 100L);
            bank.createAccount("B", 0L);
            mongo.invariants().expectTotal(mongo.database(), 100L);
            assertThatThrownBy(() -> bank.transfer("t-stale", "A", "B", 10L)).hasMessage("crash");
            assertThat(health.health().getStatus()).as("abandoned, but within its lease").isEqualTo(Status.UP);

            mongo.expireLeases(mongo.database());
            Health stale = health.health();
            assertThat(stale.getStatus()).isEqualTo(Status.DOWN);
            assertThat((String) stale.getDetails().get("reason")).contains("more than twice the lease (60.000s)");

            Map<String, Object> status = context.getBean(Mongo2pcEndpoint.class).status();
            assertThat(status).containsEntry("applied", 1L).containsEntry("done", 0L).containsEntry("markers", 2L)
                    .containsKeys("initial", "pending", "canceling", "canceled", "oldestOpenSeconds");

            context.getBean(TransactionManager.class).recover();
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            assertThat(context.getBean(Mongo2pcEndpoint.class).status()).containsEntry("applied", 0L).containsEntry("done", 1L)
                    .containsEntry("markers", 0L);
        });
    }

    @Test
    void health_isDown_whenTheCoordinatorCannotBeReached() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        MongoClient unreachable = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString("mongodb://127.0.0.1:" + closedPort))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(200, TimeUnit.MILLISECONDS)).build());
        try {
            runner(unreachable).withPropertyValues("mongo2pc.retry-timeout=0s").run(context -> {
                Health health = context.getBean(Mongo2pcHealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                assertThat(health.getDetails()).containsKey("error");
            });
        } finally {
            unreachable.close();
        }
    }

    @Test
    void healthAndEndpoint_canBeSwitchedOff() {
        runner(mongo.newClient()).withPropertyValues("management.health.mongo2pc.enabled=false",
                        "management.endpoints.web.exposure.include=health")
                .run(context -> assertThat(context).doesNotHaveBean(Mongo2pcHealthIndicator.class)
                        .doesNotHaveBean(Mongo2pcEndpoint.class));
    }

    @Test
    void worker_runsQueuedTransactions_andAtShutdownFinishesTheOneItHolds() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        Mongo2pcWorker[] worker = new Mongo2pcWorker[1];
        // The second queued transfer stops just before its commit point until shutdown has begun.
        TransactionManagerCustomizer holdSecond = builder -> builder.crashHook((point, id) -> {
            if (point.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1)) && "t-2".equals(id)) {
                holding.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (worker[0].isRunning() && System.nanoTime() < deadline) {
                    sleep(10);
                }
            }
        });
        ConfigurableApplicationContext[] closed = new ConfigurableApplicationContext[1];
        runner(mongo.newClient()).withBean(TransactionManagerCustomizer.class, () -> holdSecond)
                .withPropertyValues("mongo2pc.worker.enabled=true", "mongo2pc.worker.threads=2",
                        "mongo2pc.worker.scan-period=100ms", "mongo2pc.finishing=background")
                .run(context -> {
                    worker[0] = context.getBean(Mongo2pcWorker.class);
                    assertThat(worker[0].isRunning()).isTrue();
                    Bank bank = context.getBean(Bank.class);
                    TransactionManager manager = context.getBean(TransactionManager.class);
                    bank.createAccount("A", 100L);
                    bank.createAccount("B", 0L);
                    mongo.invariants().expectTotal(mongo.database(), 100L);
bank.submit("t-1", "A", "B", 10L);
                    assertThat(manager.awaitOutcome("t-1", Duration.ofSeconds(30))).hasValueSatisfying(o ->
                            assertThat(o.isCommitted()).isTrue());
bank.submit("t-2", "A", "B", 20L);
                    assertThat(holding.await(30, TimeUnit.SECONDS)).as("the worker holds t-2").isTrue();
closed[0] = context;
                });
// run(...) closed the context: the worker stopped, then the manager closed
        assertThat(closed[0].isActive()).isFalse();
        assertThat(worker[0].isRunning()).isFalse();
        assertThat(worker[0].ran()).isEqualTo(2);
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions")
                .find(new org.bson.Document("_id", "t-2")).first().getString("state"))
                .as("finished before the application stopped").isEqualTo(TransactionState.DONE.stored());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
