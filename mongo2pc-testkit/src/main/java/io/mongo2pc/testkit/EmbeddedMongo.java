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
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
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
 *
 * <p>With the system property {@value #URI_PROPERTY} (e.g. {@code mvn verify
 * -Dmongo2pc.test.uri=mongodb://host:27017/}) no server is started: the tests run against that
 * deployment, each in databases of its own (named after the run, a counter and the test, so runs
 * and test classes never meet) that are dropped after the test. Of two extensions in a test
 * class (tests across two clusters), the one JUnit registers second uses {@value #URI2_PROPERTY},
 * or the first URI if that is not given. Tests that stop or restart a server start their own and are not switched.
 */
public final class EmbeddedMongo implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    /** The deployment the tests use instead of an embedded server. */
    public static final String URI_PROPERTY = "mongo2pc.test.uri";
    /** The deployment of the second extension of a test class (the second cluster). */
    public static final String URI2_PROPERTY = "mongo2pc.test.uri2";

    private static final AtomicInteger DATABASES = new AtomicInteger();
    /** Sets this run's databases apart from other runs' on a shared deployment. */
    static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong(36L * 36 * 36), 36);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(EmbeddedMongo.class);

    private final String uri1;
    private final String uri2;
    private String externalUri;
    private EmbeddedServer server;
    private MongoClient client;
    private final List<MongoClient> extraClients = new ArrayList<>();
    private Invariants invariants;
    private String database;
    private String skipReason;

    private EmbeddedMongo(String uri1, String uri2) {
        this.uri1 = blankToNull(uri1);
        this.uri2 = blankToNull(uri2);
    }

    /** An embedded server in memory, or the deployment of {@value #URI_PROPERTY} ({@value #URI2_PROPERTY}) when set. */
    public static EmbeddedMongo inMemory() {
        return new EmbeddedMongo(System.getProperty(URI_PROPERTY), System.getProperty(URI2_PROPERTY));
    }

    /**
     * Tests against the deployments at {@code uri} (and {@code uri2} for the extension of a class
     * registered second; null: {@code uri}) instead of an embedded server, as with the system properties.
     */
    public static EmbeddedMongo external(String uri, String uri2) {
        if (blankToNull(uri) == null) {
            throw new IllegalArgumentException("a MongoDB URI is required, got '" + uri + "'");
        }
        return new EmbeddedMongo(uri, uri2);
    }

    /** The URI of {@value #URI_PROPERTY}, if the tests run against a deployment given by the user. */
    public static Optional<String> externalUri() {
        return Optional.ofNullable(blankToNull(System.getProperty(URI_PROPERTY)));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        int rank = context.getStore(NAMESPACE).getOrComputeIfAbsent("extensions", k -> new AtomicInteger(), AtomicInteger.class)
                .getAndIncrement();
        externalUri = uri1 == null ? null : rank > 0 && uri2 != null ? uri2 : uri1;
        if (externalUri == null) {
            server = EmbeddedServer.inMemory().start();
        }
        client = newClient();
        if (externalUri != null) {
            requireReachable();
        }
    }

    private void requireReachable() {
        try {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
        } catch (RuntimeException e) {
            throw new IllegalStateException("the MongoDB deployment of " + (externalUri.equals(uri2) ? URI2_PROPERTY : URI_PROPERTY)
                    + " (hosts " + new ConnectionString(externalUri).getHosts() + ") did not answer a ping: " + e.getMessage(), e);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        database = "t" + (externalUri == null ? "" : RUN + "_") + DATABASES.incrementAndGet() + "_"
                + context.getRequiredTestMethod().getName();
        // MongoDB allows 63 bytes; tests add suffixes for further databases
        if (database.length() > 40) {
            database = database.substring(0, 40);
        }
        invariants = new Invariants(client, database);
        skipReason = null;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try {
            if (skipReason == null && context.getExecutionException().isEmpty()) {
                invariants.assertHold();
            }
        } finally {
            if (externalUri != null) {
                dropDatabases();
            }
        }
    }

    /** On a deployment of the user's: drops this test's databases (its own name and those it prefixes). */
    private void dropDatabases() {
        for (String name : client.listDatabaseNames()) {
            if (name.startsWith(database)) {
                client.getDatabase(name).drop();
            }
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
        ConnectionString uri = new ConnectionString(uri());
        MongoClient extra = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(uri)
                .applyToClusterSettings(b -> {
                    if (uri.getServerSelectionTimeout() == null) {
                        b.serverSelectionTimeout(5, TimeUnit.SECONDS);
                    }
                })
                .build());
        if (client != null) {
            extraClients.add(extra);
        }
        return extra;
    }

    /** The URI of the server or deployment; the caller adds settings with the driver's builder, not to the text. */
    public String uri() {
        return externalUri != null ? externalUri : server.uri();
    }

    /** True when the tests run against a deployment given by {@value #URI_PROPERTY}, not an embedded server. */
    public boolean isExternal() {
        return externalUri != null;
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

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
