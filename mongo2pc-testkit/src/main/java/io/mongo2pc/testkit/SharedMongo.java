package io.mongo2pc.testkit;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.embedded.EmbeddedServer;

/**
 * A server for tests whose application outlives JUnit's class callbacks (Spring's test contexts
 * are closed after them, and their workers write until then): the deployment of
 * {@value EmbeddedMongo#URI_PROPERTY} when given, or else one embedded server for the whole test
 * JVM, started on first use and gone with the JVM. Such a test names its database with
 * {@link #database(String)} and, once its application is closed, calls {@link #dropIfExternal}.
 * Thread-safe.
 */
public final class SharedMongo {
    private static EmbeddedServer server;

    private SharedMongo() { }

    /** The URI the test's application connects to. */
    public static synchronized String uri() {
        return EmbeddedMongo.externalUri().orElseGet(() -> {
            if (server == null) {
                server = EmbeddedServer.inMemory().start();
            }
            return server.uri();
        });
    }

    /** {@code name} on the embedded server; on a deployment of the user's, {@code name} marked with this run. */
    public static String database(String name) {
        return EmbeddedMongo.externalUri().isPresent() ? name + "_" + EmbeddedMongo.RUN : name;
    }

    /** On a deployment of the user's, drops {@link #database(String) database(name)}; call it after the application closed. */
    public static void dropIfExternal(String name) {
        if (EmbeddedMongo.externalUri().isPresent()) {
            try (MongoClient client = MongoClients.create(uri())) {
                client.getDatabase(database(name)).drop();
            }
        }
    }
}
