package io.mongo2pc.spring;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.DocumentRef;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The MongoClients the auto-configured manager reaches, by target name: {@code default} is the
 * application's MongoClient unless {@code mongo2pc.targets.default} names another deployment;
 * every other target is a client made from its URI, owned here and closed by {@link #close()}
 * (the application's own client is never closed here). Thread-safe once built.
 */
public final class Mongo2pcTargets implements AutoCloseable {
    private final Map<String, MongoClient> clients = new LinkedHashMap<>();
    private final List<MongoClient> owned = new ArrayList<>();

    /**
     * Clients for {@code uris} (target name to connection string), and {@code applicationClient}
     * (may be null) as {@code default} unless {@code uris} has one. A URI that is not a MongoDB
     * connection string is refused with the property it came from, before any client is made.
     */
    public Mongo2pcTargets(MongoClient applicationClient, Map<String, String> uris) {
        Map<String, ConnectionString> parsed = new LinkedHashMap<>();
        uris.forEach((name, uri) -> {
            try {
                parsed.put(name, new ConnectionString(uri == null ? "" : uri.trim()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("mongo2pc.targets." + name + " is not a MongoDB connection string: "
                        + e.getMessage());
            }
        });
        if (!parsed.containsKey(DocumentRef.DEFAULT_TARGET)) {
            if (applicationClient == null) {
                throw new IllegalStateException("mongo2pc needs a MongoClient for its transactions collection: set"
                        + " spring.mongodb.uri, define a MongoClient bean, or set mongo2pc.targets.default");
            }
            clients.put(DocumentRef.DEFAULT_TARGET, applicationClient);
        }
        parsed.forEach((name, uri) -> {
            MongoClient client = MongoClients.create(uri);
            owned.add(client);
            clients.put(name, client);
        });
    }

    /** Every target by name, {@code default} included. */
    public Map<String, MongoClient> clients() {
        return Collections.unmodifiableMap(clients);
    }

    /** Closes the clients made from {@code mongo2pc.targets.*}. */
    @Override
    public void close() {
        owned.forEach(MongoClient::close);
    }
}
