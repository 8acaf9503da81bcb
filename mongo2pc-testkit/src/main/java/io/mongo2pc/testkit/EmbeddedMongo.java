package io.mongo2pc.testkit;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.embedded.EmbeddedServer;
import org.bson.Document;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A JUnit 5 extension: one embedded server per test class, reached over TCP by the real driver,
 * a fresh database name per test, and the {@link Invariants} checked after every test (like
 * Caffeine's validation interceptor), so no test can leave money created, markers behind or a
 * transaction open without failing.
 *
 * <pre>{@code
 * @RegisterExtension static EmbeddedMongo mongo = EmbeddedMongo.inMemory();
 * }</pre>
 */
public final class EmbeddedMongo implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private EmbeddedServer server;
    private MongoClient client;
    private final List<MongoClient> extraClients = new ArrayList<>();
    private Invariants invariants;
    private String database;
    private String skipReason;

    private EmbeddedMongo() { }

    public static EmbeddedMongo inMemory() {
        return new EmbeddedMongo();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server = EmbeddedServer.inMemory().start();
        client = newClient();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        database = "t" + DATABASES.incrementAndGet() + "_" + context.getRequiredTestMethod().getName();
        // MongoDB allows 63 bytes; tests add suffixes for further databases
        if (database.length() > 40) {
            database = database.substring(0, 40);
        }
        invariants = new Invariants(client, database);
        skipReason = null;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (skipReason == null && context.getExecutionException().isEmpty()) {
            invariants.assertHold();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        extraClients.forEach(MongoClient::close);
        extraClients.clear();
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** A client shared by the test class. */
    public MongoClient client() {
        return client;
    }

    /** A new client of its own (closed after the class), e.g. for a second manager instance. */
    public MongoClient newClient() {
        MongoClient extra = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(server.uri()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS))
                .build());
        if (client != null) {
            extraClients.add(extra);
        }
        return extra;
    }

    public String uri() {
        return server.uri();
    }

    /** A database name of this test's own; the invariants check it and every database named with it as a prefix. */
    public String database() {
        return database;
    }

    /** What is checked after this test; tests add expectations (e.g. the total of balances). */
    public Invariants invariants() {
        return invariants;
    }

    /**
     * Moves time forward for the open transactions of {@code database}: their {@code lastModified}
     * stamps are set far in the past, so their owners' leases have run out and any process may
     * take them over. Only for owners that are dead (crashed): a live, paused owner keeps a
     * deadline in server time that only real time can pass.
     */
    public long expireLeases(String database) {
        return expireLeases(client, database);
    }

    /** {@link #expireLeases(String)} for tests that run their own server (jqwik properties). */
    public static long expireLeases(MongoClient client, String database) {
        return transactions(client, database).updateMany(
                new Document("state", new Document("$in", List.of("pending", "applied", "committed", "canceling"))),
                new Document("$set", new Document("lastModified", new Date(0)))).getModifiedCount();
    }

    /**
     * The transactions collection (under the library's default name) of {@code database}, as
     * stored: for tests that read it or prepare it by hand, as another application would.
     */
    public MongoCollection<Document> transactions(String database) {
        return transactions(client, database);
    }

    /** {@link #transactions(String)} for tests that run their own server. */
    public static MongoCollection<Document> transactions(MongoClient client, String database) {
        return client.getDatabase(database).getCollection("transactions");
    }

    /** Skips the invariant check after this test only: say why. */
    public void skipInvariants(String reason) {
        this.skipReason = reason;
    }
}
