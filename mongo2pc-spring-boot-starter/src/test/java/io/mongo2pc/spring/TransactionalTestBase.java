package io.mongo2pc.spring;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spring.TransactionalApp.Wallet;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testkit.Invariants;
import io.mongo2pc.testkit.SharedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tests of {@link TransactionalApp} against the embedded server over TCP ({@link SharedMongo}).
 * Every class extending this one shares one Spring context (the same configuration), which lives
 * until the test JVM ends: its manager finishes everything a test committed before the test ends.
 * After each test: no transaction open, no marker, no lock left on a document.
 */
@SpringBootTest(classes = TransactionalApp.class, properties = "mongo2pc.application=transactional-test")
abstract class TransactionalTestBase {
    static final String DATABASE = SharedMongo.database("transactional");
    private static final AtomicInteger NEXT = new AtomicInteger();

    @DynamicPropertySource
    static void mongo(DynamicPropertyRegistry registry) {
        registry.add("spring.mongodb.uri", SharedMongo::uri);
        registry.add("spring.mongodb.database", () -> DATABASE);
        registry.add("mongo2pc.database", () -> DATABASE);
    }

    @Autowired TransactionManager manager;
    @Autowired MongoClient client;
    @Autowired Mongo2pcOperations ops;

    /** An id no other test uses (the context, and so the database, is shared). */
    static String unique(String name) {
        return name + "-" + NEXT.incrementAndGet();
    }

    /** A wallet committed with {@code balance}. */
    Wallet wallet(String name, long balance) {
        return ops.insert(new Wallet(unique(name), balance, name));
    }

    /** The wallet's balance as of the last commit. */
    long balance(Wallet wallet) {
        return ops.findById(wallet.id, Wallet.class).orElseThrow().balance;
    }

    @AfterEach
    void nothingLeftBehind() {
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).as("committed transactions finished").isTrue();
        new Invariants(client, DATABASE).assertHold();
        MongoDatabase db = client.getDatabase(DATABASE);
        List<String> leftovers = new ArrayList<>();
        for (String collection : db.listCollectionNames()) {
            for (Document doc : db.getCollection(collection).find()) {
                doc.keySet().stream().filter(LibraryFields::leftover)
                        .forEach(field -> leftovers.add(collection + " " + doc.get("_id") + " keeps " + field));
            }
        }
        assertThat(leftovers).as("locks or entries left on documents").isEmpty();
    }
}
