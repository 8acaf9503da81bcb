package io.mongo2pc.embedded;

import de.bwaldvogel.mongo.MongoServer;
import io.mongo2pc.embedded.internal.AddedLatency;
import io.mongo2pc.embedded.internal.DurableBackend;
import io.mongo2pc.embedded.internal.DurableStore;
import io.mongo2pc.embedded.internal.QuietDisconnects;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A MongoDB-compatible server running inside this JVM (mongo-java-server), reached over TCP on
 * 127.0.0.1 by the real MongoDB driver.
 *
 * <p>{@link #inMemory()} keeps everything in memory; {@link #onDisk(Path)} keeps data in a folder so
 * it survives a restart and a crash: no write is acknowledged before it is forced to disk, and
 * after a crash (even kill -9) the folder holds every acknowledged write and is one consistent
 * point in time. Both kinds never hand out a document half-updated by a concurrent write, and look
 * {@code _id} up for any filter with {@code _id} equality. See docs/EMBEDDED.md for what it does
 * not do.
 *
 * <p>{@link #withLatency(Duration)} makes every reply leave a fixed time after its request arrived,
 * standing for the network and replication between an application and a real MongoDB.
 *
 * <p>Thread-safe; {@link #close()} stops the server (and flushes and unlocks the data folder).
 */
public final class EmbeddedServer implements AutoCloseable {

    private final Path dataDir;
    private final long compactThreshold;
    private final Duration latency;
    private final int workerThreads;
    private final Duration commitDelay;
    private final int maxConcurrentForces;
    private AddedLatency addedLatency;
    private DurableStore store;
    private MongoServer server;
    private InetSocketAddress address;

    private EmbeddedServer(Path dataDir, long compactThreshold, Duration latency, int workerThreads,
                           Duration commitDelay, int maxConcurrentForces) {
        this.dataDir = dataDir;
        this.compactThreshold = compactThreshold;
        this.latency = latency;
        this.workerThreads = workerThreads;
        this.commitDelay = commitDelay;
        this.maxConcurrentForces = maxConcurrentForces;
    }

    private EmbeddedServer(Path dataDir, long compactThreshold) {
        this(dataDir, compactThreshold, Duration.ZERO, Runtime.getRuntime().availableProcessors(),
                DurableStore.DEFAULT_COMMIT_DELAY, DurableStore.DEFAULT_MAX_CONCURRENT_FORCES);
    }

    /** A server whose data lives in memory only and is gone when it stops. */
    public static EmbeddedServer inMemory() {
        return new EmbeddedServer(null, 0);
    }

    /**
     * This server (not started yet), answering every request {@code latency} after it arrived:
     * a reply leaves then, or once the request's writes are on disk if that is later. It stands for
     * the network round trip and the replication of a real deployment; no thread waits meanwhile,
     * so connections do not delay each other. Zero (the default) adds nothing.
     *
     * @throws IllegalArgumentException if {@code latency} is negative or more than 5 seconds
     */
    public EmbeddedServer withLatency(Duration latency) {
        return new EmbeddedServer(dataDir, compactThreshold, AddedLatency.check(latency), workerThreads, commitDelay,
                maxConcurrentForces);
    }

    /** The latency added to every request (zero: none). */
    public Duration latency() {
        return latency;
    }

    /**
     * This server (not started yet) with {@code threads} network threads (event loops), each
     * serving its share of the connections. No request waits for the disk on them (replies wait
     * in their connection's gate), so one per core (the default) keeps the cores busy with the
     * fewest thread switches; a long request (a scan of a large collection) delays the other
     * connections of its event loop meanwhile: more threads if that matters more than throughput.
     *
     * @throws IllegalArgumentException if {@code threads} is not between 1 and 1024
     */
    public EmbeddedServer withWorkerThreads(int threads) {
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("worker threads must be between 1 and 1024, was " + threads);
        }
        return new EmbeddedServer(dataDir, compactThreshold, latency, threads, commitDelay, maxConcurrentForces);
    }

    /** The number of network threads (default: the number of cores). */
    public int workerThreads() {
        return workerThreads;
    }

    /**
     * This server (not started yet, on disk) letting the log writer hold a force of the log back
     * for up to {@code delay} while other requests are still being handled, so one force covers
     * their records too; it forces as soon as the last of them finishes, and a lone request never
     * waits. Zero forces at once. Default 200 µs. No effect in memory.
     *
     * @throws IllegalArgumentException if {@code delay} is negative or more than 1 second
     */
    public EmbeddedServer withCommitDelay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("commit delay must be between 0 and 1 second, was " + delay);
        }
        return new EmbeddedServer(dataDir, compactThreshold, latency, workerThreads, delay, maxConcurrentForces);
    }

    /** How long a force of the log may be held back for requests still being handled. */
    public Duration commitDelay() {
        return commitDelay;
    }

    /**
     * This server (not started yet, on disk) allowing {@code forces} forces of the log to run at
     * once. The log writer runs one at a time, so this matters only for threads that wait for
     * durability outside the wire protocol, and for closing. Default 4. No effect in memory.
     *
     * @throws IllegalArgumentException if {@code forces} is not between 1 and 64
     */
    public EmbeddedServer withMaxConcurrentForces(int forces) {
        if (forces < 1 || forces > 64) {
            throw new IllegalArgumentException("concurrent forces must be between 1 and 64, was " + forces);
        }
        return new EmbeddedServer(dataDir, compactThreshold, latency, workerThreads, commitDelay, forces);
    }

    /** How many forces of the log may run at once. */
    public int maxConcurrentForces() {
        return maxConcurrentForces;
    }

    /** A server whose data is kept in {@code dataDir} (created if missing). */
    public static EmbeddedServer onDisk(Path dataDir) {
        return onDisk(dataDir, DurableStore.DEFAULT_COMPACT_THRESHOLD);
    }

    /**
     * Like {@link #onDisk(Path)}, compacting the log into a new snapshot once it outgrows
     * {@code compactThresholdBytes} (or the snapshot, whichever is larger).
     */
    public static EmbeddedServer onDisk(Path dataDir, long compactThresholdBytes) {
        Objects.requireNonNull(dataDir, "dataDir");
        if (compactThresholdBytes < 1) {
            throw new IllegalArgumentException("compactThresholdBytes must be positive, was " + compactThresholdBytes);
        }
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dataDir, e);
        }
        return new EmbeddedServer(dataDir, compactThresholdBytes);
    }

    /**
     * Opens the data (recovering it after a crash) and starts listening on 127.0.0.1:{@code port};
     * port 0 picks a free one. Returns this server.
     *
     * @throws IllegalStateException if already started, or if another server uses the data folder
     */
    public synchronized EmbeddedServer start(int port) {
        if (address != null) {
            throw new IllegalStateException("server already started at " + uri());
        }
        DurableBackend backend;
        if (dataDir == null) {
            backend = DurableBackend.inMemory();
        } else {
            try {
                store = DurableStore.open(dataDir, compactThreshold, commitDelay, maxConcurrentForces);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open data directory " + dataDir, e);
            }
            try {
                backend = DurableBackend.onDisk(store); // restores the data: can fail on a damaged folder
            } catch (RuntimeException e) {
                closeStore(); // or the folder stays locked by this JVM and the next start hides this error
                throw e;
            }
        }
        if (!latency.isZero()) {
            addedLatency = new AddedLatency(latency);
            backend.withLatency(addedLatency);
        }
        server = new MongoServer(backend);
        try {
            server.bind(new InetSocketAddress("127.0.0.1", port), 0, workerThreads);
        } catch (RuntimeException e) {
            server = null;
            closeStore();
            closeLatency();
            throw e;
        }
        QuietDisconnects.install(server);
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

    /** The store of an on-disk server while it runs (for tests in this package); null in memory. */
    synchronized DurableStore store() {
        return store;
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stopListening();
            if (store != null) {
                // replies held until their writes are on disk leave before the connections close
                store.settle();
            }
            if (addedLatency != null) {
                // and replies held for the latency leave once due
                sleepQuietly(latency);
            }
            server.shutdownNow();
            server = null;
        }
        closeStore();
        closeLatency();
        address = null;
    }

    private static void sleepQuietly(Duration duration) {
        try {
            Thread.sleep(duration.toMillis() + 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeLatency() {
        if (addedLatency != null) {
            addedLatency.close();
            addedLatency = null;
        }
    }

    private void closeStore() {
        if (store != null) {
            store.close();
            store = null;
        }
    }
}
