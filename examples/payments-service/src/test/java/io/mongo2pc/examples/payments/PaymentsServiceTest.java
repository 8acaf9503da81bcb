package io.mongo2pc.examples.payments;

import com.mongodb.client.MongoClient;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spring.Mongo2pcWorker;
import io.mongo2pc.testkit.Invariants;
import io.mongo2pc.testkit.SharedMongo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service over HTTP, on a random port, against the embedded server over TCP: open accounts,
 * transfer (and a retried transfer that pays once), pay an order, read committed balances, the
 * refusals, and the mongo2pc health and status endpoints. After each test no transaction is open
 * and no marker or negative balance is left.
 * The server ({@link SharedMongo}: a deployment given with {@code -Dmongo2pc.test.uri}, or an
 * embedded one) outlives the context, which closes after the class and needs it until then.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class PaymentsServiceTest {
    private static final String DATABASE = SharedMongo.database("payments_test");
    private static Mongo2pcWorker worker;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newHttpClient();

    @DynamicPropertySource
    static void mongo(DynamicPropertyRegistry registry) {
        registry.add("spring.mongodb.uri", SharedMongo::uri);
        registry.add("mongo2pc.database", () -> DATABASE);
    }

    @AfterAll
    static void dropDatabase() {
        if (worker != null) {
            worker.stop(); // before the drop: it writes until it stops (the context, closed after this, finds it stopped)
        }
        SharedMongo.dropIfExternal("payments_test");
    }

    @LocalServerPort int port;
    @Autowired MongoClient client;
    @Autowired Mongo2pcWorker runningWorker;
    @Autowired TransactionManager manager;

    record Reply(int status, JsonNode body) { }

    private Reply send(String method, String path, String json) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json");
        request = json == null ? request.method(method, HttpRequest.BodyPublishers.noBody())
                : request.method(method, HttpRequest.BodyPublishers.ofString(json));
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(response.statusCode(), response.body().isEmpty() ? null : JSON.readTree(response.body()));
    }

    @AfterEach
    void booksBalance() {
        worker = runningWorker;
        // A transfer or payment is answered at its commit point: the manager's finisher thread then
        // releases its markers and moves it to done.
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).as("committed transactions finished").isTrue();
        new Invariants(client, DATABASE).assertHold(); // no open transaction, no marker, no negative balance
    }

    @Test
    void openTransferPayAndReadCommitted_overHttp() throws Exception {
        assertThat(send("POST", "/accounts", "{\"id\":\"alice\",\"balance\":150}").status()).isEqualTo(201);
        assertThat(send("POST", "/accounts", "{\"id\":\"bob\",\"balance\":50}").status()).isEqualTo(201);
        assertThat(send("POST", "/accounts", "{\"id\":\"shop\",\"balance\":0}").status()).isEqualTo(201);

        Reply transfer = send("PUT", "/transfers/t-1", "{\"from\":\"alice\",\"to\":\"bob\",\"amount\":30}");
        assertThat(transfer.status()).isEqualTo(200);
        // answered at its commit point (the starter finishes in the background by default)
        assertThat(transfer.body().get("committed").asBoolean()).isTrue();
        assertThat(transfer.body().get("state").asString()).isEqualTo("applied");
        Reply retried = send("PUT", "/transfers/t-1", "{\"from\":\"alice\",\"to\":\"bob\",\"amount\":30}");
        assertThat(retried.status()).as("the same id is the same transfer").isEqualTo(200);

        Reply poor = send("PUT", "/transfers/t-2", "{\"from\":\"bob\",\"to\":\"alice\",\"amount\":1000}");
        assertThat(poor.status()).isEqualTo(409);
        assertThat(poor.body().get("code").asString()).isEqualTo("INSUFFICIENT_FUNDS");

        assertThat(send("POST", "/orders", "{\"id\":\"o1\",\"total\":25}").status()).isEqualTo(201);
        Reply paid = send("PUT", "/orders/o1/payment", "{\"account\":\"alice\",\"merchant\":\"shop\"}");
        assertThat(paid.status()).isEqualTo(200);
        Reply again = send("PUT", "/orders/o1/payment", "{\"account\":\"alice\",\"merchant\":\"shop\"}");
        assertThat(again.status()).as("paying twice is the same payment").isEqualTo(200);
        assertThat(send("GET", "/orders/o1", null).body().get("state").asString()).isEqualTo("Paid");

        assertThat(send("GET", "/accounts/alice", null).body().get("balance").asLong()).isEqualTo(95L);
        assertThat(send("GET", "/accounts/bob", null).body().get("balance").asLong()).isEqualTo(80L);
        assertThat(send("GET", "/accounts/shop", null).body().get("balance").asLong()).isEqualTo(25L);
        assertThat(send("GET", "/accounts/nobody", null).status()).isEqualTo(404);
        // money moved, none made: 150 + 50 + 0 at the start
    }

    @Test
    void badInput_isRefusedInTheUsersWords_andChangesNothing() throws Exception {
        assertThat(send("POST", "/accounts", "{\"id\":\"carol\",\"balance\":200}").status()).isEqualTo(201);
        Reply negative = send("PUT", "/transfers/t-bad", "{\"from\":\"carol\",\"to\":\"dave\",\"amount\":-5}");
        assertThat(negative.status()).isEqualTo(400);
        assertThat(negative.body().get("error").asString()).contains("amount").doesNotContain("Exception");
        Reply again = send("POST", "/accounts", "{\"id\":\"carol\",\"balance\":1}");
        assertThat(again.status()).isEqualTo(400);
        assertThat(again.body().get("error").asString()).isEqualTo("account carol already exists");
        assertThat(send("GET", "/accounts/carol", null).body().get("balance").asLong()).isEqualTo(200L);
    }

    @Test
    void transfer_fractionalAmountForWholeUnitAccounts_isRefusedNotRounded() throws Exception {
        assertThat(send("POST", "/accounts", "{\"id\":\"dora\",\"balance\":100}").status()).isEqualTo(201);
        assertThat(send("POST", "/accounts", "{\"id\":\"erin\",\"balance\":0}").status()).isEqualTo(201);

        Reply fractional = send("PUT", "/transfers/t-frac", "{\"from\":\"dora\",\"to\":\"erin\",\"amount\":1.5}");

        assertThat(fractional.status()).as(fractional.body().toString()).isEqualTo(400);
        assertThat(fractional.body().get("error").asString()).contains("1.5").doesNotContain("Exception");
        assertThat(send("GET", "/accounts/dora", null).body().get("balance").asLong()).isEqualTo(100L);
        assertThat(send("GET", "/accounts/erin", null).body().get("balance").asLong()).isZero();
        Reply whole = send("PUT", "/transfers/t-whole", "{\"from\":\"dora\",\"to\":\"erin\",\"amount\":2.0}");
        assertThat(whole.status()).as("2.0 is a whole amount: " + whole.body()).isEqualTo(200);
        assertThat(send("GET", "/accounts/erin", null).body().get("balance").asLong()).isEqualTo(2L);
    }

    @Test
    void health_isUpAgainstTheEmbeddedServer_mongoIndicatorIncluded() throws Exception {
        Reply health = send("GET", "/actuator/health", null);

        assertThat(health.status()).as(health.body().toString()).isEqualTo(200);
        assertThat(health.body().get("status").asString()).isEqualTo("UP");
    }

    @Test
    void healthAndStatus_areServedByActuator() throws Exception {
        Reply health = send("GET", "/actuator/health/mongo2pc", null);
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body().get("status").asString()).isEqualTo("UP");
        Reply status = send("GET", "/actuator/mongo2pc", null);
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body().has("pending")).isTrue();
        assertThat(status.body().get("markers").asLong()).isZero();
    }
}
