package io.mongo2pc.testing;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;

/** A database out of reach, for tests of what the library does when every request fails. */
public final class Unreachable {
    private Unreachable() { }

    /** A client of a loopback port no server listens on, failing each request at once (no server selection wait). */
    public static MongoClient client() {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString("mongodb://127.0.0.1:" + port + "/?directConnection=true"))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(0, TimeUnit.MILLISECONDS))
                .build());
    }
}
