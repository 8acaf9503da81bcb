package io.mongo2pc.spring;

import com.mongodb.client.MongoClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.micrometer.TransactionObservations;
import io.mongo2pc.testkit.Invariants;
import io.mongo2pc.testkit.SharedMongo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole of Spring Boot's auto-configuration (MongoDB client from {@code spring.mongodb.uri},
 * Micrometer, observations, health) with the starter, against the embedded server over TCP.
 * The server ({@link SharedMongo}: a deployment given with {@code -Dmongo2pc.test.uri}, or an
 * embedded one) outlives the context, which is closed after the class: its worker stops, then the
 * manager closes, and both need the server until then.
 */
@SpringBootTest(classes = Mongo2pcSpringBootTest.App.class, properties = {
        "mongo2pc.application=boot-test", "mongo2pc.worker.enabled=true",
        "mongo2pc.worker.scan-period=100ms", "management.endpoints.web.exposure.include=health,mongo2pc"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class Mongo2pcSpringBootTest {
    private static final String DATABASE = SharedMongo.database("boot");
    private static Mongo2pcWorker worker;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App { }

    @DynamicPropertySource
    static void mongo(DynamicPropertyRegistry registry) {
        registry.add("spring.mongodb.uri", SharedMongo::uri);
        registry.add("mongo2pc.database", () -> DATABASE);
        registry.add("spring.mongodb.database", () -> DATABASE); // Spring Data's (on the test classpath), else none in the URI
    }

    @AfterAll
    static void dropDatabase() {
        if (worker != null) {
            worker.stop(); // before the drop: it writes until it stops (the context, closed after this, finds it stopped)
        }
        SharedMongo.dropIfExternal("boot");
    }

    @Autowired TransactionManager manager;
    @Autowired Bank bank;
    @Autowired MongoClient client;
    @Autowired MeterRegistry meters;
    @Autowired HealthEndpoint health;
    @Autowired Mongo2pcEndpoint status;
    @Autowired TransactionObservations observations;
    @Autowired Mongo2pcWorker runningWorker;

    @AfterEach
    void invariantsHold() {
        worker = runningWorker;
        new Invariants(client, DATABASE).expectTotal(DATABASE, 100L).assertHold();
    }

    @Test
    void transfersAndQueuedTransfers_runOnTheApplicationsMongoClient_measuredAndHealthy() throws InterruptedException {
        assertThat(manager.settings().target("default")).isSameAs(client);
        assertThat(manager.settings().application()).isEqualTo("boot-test");
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);

        TransactionOutcome direct = bank.transfer("boot-1", "A", "B", 10L);
        bank.submit("boot-2", "A", "B", 5L);
        TransactionOutcome queued = manager.awaitOutcome("boot-2", Duration.ofSeconds(30)).orElseThrow();

        assertThat(direct.isCommitted()).isTrue();
        assertThat(queued.isCommitted()).as("run by the in-process worker").isTrue();
        // Both calls return at the commit point (finishing in the background, the default): a
        // finisher thread then credits B, releases the markers and moves each to done, and counts it
        // and closes its observation only after that. So the books are read once both are counted.
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while ((meters.get("mongo2pc.transactions.committed").counter().count() < 2.0 || observations.following() > 0)
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(meters.get("mongo2pc.transactions.committed").counter().count()).isEqualTo(2.0);
        assertThat(bank.list()).extracting(Bank.Account::balance).containsExactly(85L, 15L);
        assertThat(health.healthForPath("mongo2pc").getStatus()).isEqualTo(Status.UP);
        assertThat(status.status()).containsEntry("done", 2L).containsEntry("markers", 0L);
        assertThat(observations.following()).isZero();
    }
}
