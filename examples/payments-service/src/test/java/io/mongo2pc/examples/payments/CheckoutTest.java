package io.mongo2pc.examples.payments;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testkit.Invariants;
import io.mongo2pc.testkit.SharedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shop's checkout over HTTP, against the embedded server over TCP: a {@code @Transactional}
 * method that reads an order, takes stock per line and inserts a shipment, as one mongo2pc
 * transaction. After each test no transaction is open and no lock is left on a document.
 */
// A checkout must finish, not finish fast: on a loaded test machine sixteen at once may need more than the 15 s default.
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"mongo2pc.worker.enabled=false", "mongo2pc.transactional.timeout=2m"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class CheckoutTest {
    private static final String DATABASE = SharedMongo.database("checkout_test");
    private static final String SHOP = DATABASE + "_shop";

    @DynamicPropertySource
    static void mongo(DynamicPropertyRegistry registry) {
        registry.add("spring.mongodb.uri", SharedMongo::uri);
        registry.add("mongo2pc.database", () -> DATABASE);
        registry.add("spring.mongodb.database", () -> SHOP);
    }

    @AfterAll
    static void dropDatabases() {
        SharedMongo.dropIfExternal("checkout_test");
        SharedMongo.dropIfExternal("checkout_test_shop");
    }

    @LocalServerPort int port;
    @Autowired MongoClient client;
    @Autowired TransactionManager manager;

    private Http.Reply send(String method, String path, String json) throws Exception {
        return new Http(port).send(method, path, json);
    }

    private long stock(String item) throws Exception {
        return send("GET", "/shop/items/" + item, null).body().get("stock").asLong();
    }

    @AfterEach
    void nothingLeftBehind() {
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).as("committed transactions finished").isTrue();
        new Invariants(client, DATABASE).assertHold(); // both databases: no open transaction, no marker
        MongoDatabase shop = client.getDatabase(SHOP);
        for (String collection : shop.listCollectionNames()) {
            for (Document doc : shop.getCollection(collection).find()) {
                assertThat(doc.keySet()).as(collection + " " + doc.get("_id"))
                        .allSatisfy(field -> assertThat(field.equals("_m2pc_v") || !field.startsWith("_m2pc")).isTrue());
            }
        }
    }

    @Test
    void checkout_takesStockPerLine_insertsTheShipment_shipsOnce() throws Exception {
        assertThat(send("POST", "/shop/items", "{\"id\":\"lamp\",\"name\":\"Desk lamp\",\"stock\":5}").status()).isEqualTo(201);
        assertThat(send("POST", "/shop/items", "{\"id\":\"bulb\",\"name\":\"Bulb\",\"stock\":10}").status()).isEqualTo(201);
        assertThat(send("POST", "/shop/orders", "{\"id\":\"o1\",\"lines\":[{\"item\":\"lamp\",\"quantity\":2},"
                + "{\"item\":\"bulb\",\"quantity\":3},{\"item\":\"lamp\",\"quantity\":1}]}").status()).isEqualTo(201);
        assertThat(send("POST", "/shop/orders", "{\"id\":\"o2\",\"lines\":[{\"item\":\"bulb\",\"quantity\":1},"
                + "{\"item\":\"lamp\",\"quantity\":3}]}").status()).isEqualTo(201);

        Http.Reply shipped = send("POST", "/shop/orders/o1/checkout", null);
        Http.Reply again = send("POST", "/shop/orders/o1/checkout", null);
        Http.Reply tooMany = send("POST", "/shop/orders/o2/checkout", null);

        assertThat(shipped.status()).as(String.valueOf(shipped.body())).isEqualTo(200);
        assertThat(shipped.body().get("id").asString()).isEqualTo("shipment-o1");
        assertThat(stock("lamp")).as("two lines of the same item, both taken").isEqualTo(2);
        assertThat(stock("bulb")).isEqualTo(7);
        assertThat(send("GET", "/shop/orders/o1", null).body().get("state").asString()).isEqualTo("SHIPPED");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.body().get("code").asString()).isEqualTo("ALREADY_SHIPPED");
        assertThat(tooMany.status()).isEqualTo(409);
        assertThat(tooMany.body().get("error").asString()).isEqualTo("order o2 wants 3 of item lamp, 2 left");
        assertThat(stock("bulb")).as("o2's bulb, taken before its lamp was refused, is not taken").isEqualTo(7);
        assertThat(send("GET", "/shop/orders/o2", null).body().get("state").asString()).isEqualTo("NEW");
        assertThat(send("POST", "/shop/orders/none/checkout", null).status()).isEqualTo(404);
    }

    @Test
    void badInput_isRefusedInTheUsersWords_andChangesNothing() throws Exception {
        Http.Reply fractional = send("POST", "/shop/orders", "{\"id\":\"o-frac\",\"lines\":[{\"item\":\"lamp\",\"quantity\":1.5}]}");
        Http.Reply negative = send("POST", "/shop/items", "{\"id\":\"chair\",\"name\":\"Chair\",\"stock\":-1}");
        Http.Reply empty = send("POST", "/shop/orders", "{\"id\":\"o-empty\",\"lines\":[]}");

        assertThat(fractional.status()).isEqualTo(400);
        assertThat(fractional.body().get("error").asString()).isEqualTo("quantity must be a whole number of at least 1, got 1.5");
        assertThat(negative.status()).isEqualTo(400);
        assertThat(empty.body().get("error").asString()).isEqualTo("order o-empty has no lines");
        assertThat(send("GET", "/shop/orders/o-frac", null).status()).isEqualTo(404);
        assertThat(send("GET", "/shop/items/chair", null).status()).isEqualTo(404);
    }

    /**
     * Sixteen checkouts at once for the last items: fourteen orders of a lamp (seven of them with a
     * bulb too) for five lamps and four bulbs, and an order of the last vase sent twice. Stock never
     * goes below zero, every lamp is sold, no order ships twice, and what is shipped is what left
     * the stock.
     */
    @Test
    void sixteenConcurrentCheckouts_onTheLastItems_neverBelowZero_noOrderShippedTwice() throws Exception {
        send("POST", "/shop/items", "{\"id\":\"last-lamp\",\"name\":\"Lamp\",\"stock\":5}");
        send("POST", "/shop/items", "{\"id\":\"last-bulb\",\"name\":\"Bulb\",\"stock\":4}");
        send("POST", "/shop/items", "{\"id\":\"last-vase\",\"name\":\"Vase\",\"stock\":1}");
        send("POST", "/shop/orders", "{\"id\":\"c0\",\"lines\":[{\"item\":\"last-vase\",\"quantity\":1}]}");
        List<String> checkouts = new ArrayList<>(List.of("c0", "c0")); // the same order twice, at once
        for (int i = 1; i <= 14; i++) {
            String lines = "{\"item\":\"last-lamp\",\"quantity\":1}" + (i % 2 == 1 ? ",{\"item\":\"last-bulb\",\"quantity\":1}" : "");
            assertThat(send("POST", "/shop/orders", "{\"id\":\"c" + i + "\",\"lines\":[" + lines + "]}").status()).isEqualTo(201);
            checkouts.add("c" + i);
        }

        ExecutorService threads = Executors.newFixedThreadPool(checkouts.size() + 1);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong lowestSeen = new AtomicLong(Long.MAX_VALUE);
        Map<String, List<String>> answers = new ConcurrentHashMap<>();
        try {
            Future<?> watcher = threads.submit(() -> { // committed stock, read all along
                while (running.get()) {
                    lowestSeen.accumulateAndGet(Math.min(Math.min(stock("last-lamp"), stock("last-bulb")), stock("last-vase")),
                            Math::min);
                }
                return null;
            });
            List<Future<?>> calls = new ArrayList<>();
            for (String order : checkouts) {
                calls.add(threads.submit(() -> {
                    start.await();
                    Http.Reply reply = send("POST", "/shop/orders/" + order + "/checkout", null);
                    answers.computeIfAbsent(order, o -> new CopyOnWriteArrayList<>())
                            .add(reply.status() + (reply.status() == 200 ? "" : " " + reply.body().path("code").asString("")));
                    assertThat(reply.status()).as(order + ": " + reply.body()).isIn(200, 409);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> call : calls) {
                call.get(120, TimeUnit.SECONDS);
            }
            running.set(false);
            watcher.get(30, TimeUnit.SECONDS);
        } finally {
            running.set(false);
            threads.shutdownNow();
        }

        List<String> shipped = answers.entrySet().stream().filter(e -> e.getValue().contains("200")).map(Map.Entry::getKey).toList();
        assertThat(answers.get("c0")).as("the order sent twice").containsExactlyInAnyOrder("200", "409 ALREADY_SHIPPED");
        assertThat(shipped).as("the vase's order and five lamps' orders").hasSize(6).contains("c0");
        long bulbsShipped = shipped.stream().filter(o -> Integer.parseInt(o.substring(1)) % 2 == 1).count();
        assertThat(stock("last-vase")).isZero();
        assertThat(stock("last-lamp")).isZero();
        assertThat(stock("last-bulb")).isEqualTo(4 - bulbsShipped).isNotNegative();
        assertThat(lowestSeen.get()).as("stock read while the checkouts ran").isNotNegative();
        MongoDatabase shop = client.getDatabase(SHOP);
        for (String order : checkouts.stream().distinct().toList()) {
            long shipments = shop.getCollection("shipments").countDocuments(new Document("order", order));
            String state = send("GET", "/shop/orders/" + order, null).body().get("state").asString();
            assertThat(shipments).as("shipments of " + order).isEqualTo(shipped.contains(order) ? 1 : 0);
            assertThat(state).as(order).isEqualTo(shipped.contains(order) ? "SHIPPED" : "NEW");
        }
    }
}
