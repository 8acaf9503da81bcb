package io.mongo2pc.embedded;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Optional;

/**
 * A MongoDB-compatible server running inside this JVM (mongo-java-server), reached over TCP on
 * 127.0.0.1 by the real MongoDB driver.
 *
 * <p>{@link #inMemory()} keeps everything in memory; {@link #onDisk(Path)} keeps data in a folder so
 * it survives a restart. Thread-safe; {@link #close()} stops the server.
 */
public final class EmbeddedServer implements AutoCloseable {

    private final Path dataDir;
    private final MongoServer server;
    private InetSocketAddress address;

    private EmbeddedServer(Path dataDir) {
        this.dataDir = dataDir;
        this.server = new MongoServer(createBackend(dataDir));
    }

    /** A server whose data lives in memory only and is gone when it stops. */
    public static EmbeddedServer inMemory() {
        return new EmbeddedServer(null);
    }

    /** A server whose data is kept in {@code dataDir} (created if missing). */
    public static EmbeddedServer onDisk(Path dataDir) {
        Objects.requireNonNull(dataDir, "dataDir");
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dataDir, e);
        }
        return new EmbeddedServer(dataDir);
    }

    private static MongoBackend createBackend(Path dataDir) {
        if (dataDir == null) {
            return new MemoryBackend();
        }
        return new H2Backend(dataDir.resolve("mongo2pc.mv").toString());
    }

    /** Starts listening on 127.0.0.1:{@code port}; port 0 picks a free one. Returns this server. */
    public synchronized EmbeddedServer start(int port) {
        if (address != null) {
            throw new IllegalStateException("server already started at " + uri());
        }
        server.bind("127.0.0.1", port);
        address = server.getLocalAddress();
        return this;
    }

    /** Starts on a free port. */
    public EmbeddedServer start() {
        return start(0);
    }

    /** The port the server listens on. */
    public synchronized int port() {
        if (address == null) {
            throw new IllegalStateException("server not started");
        }
        return address.getPort();
    }

    /** A connection string for the real driver, e.g. {@code mongodb://127.0.0.1:27017}. */
    public String uri() {
        return "mongodb://127.0.0.1:" + port();
    }

    /** The data folder, or empty for an in-memory server. */
    public Optional<Path> dataDir() {
        return Optional.ofNullable(dataDir);
    }

    @Override
    public synchronized void close() {
        server.shutdownNow();
        address = null;
    }
}
