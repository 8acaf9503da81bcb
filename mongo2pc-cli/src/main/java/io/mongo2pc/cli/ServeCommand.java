package io.mongo2pc.cli;

import io.mongo2pc.embedded.EmbeddedServer;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.BindException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/** {@code serve}: runs the embedded MongoDB-compatible server until SIGTERM or SIGINT. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Runs the embedded MongoDB-compatible server on 127.0.0.1 until SIGTERM or SIGINT.",
                "With --data, writes its URI to DIR/server.uri while it runs: commands without --uri on that folder use it."})
final class ServeCommand extends BaseCommand {
    @Option(names = "--port", paramLabel = "P", defaultValue = "27017",
            description = "TCP port; 0 picks a free one (default: ${DEFAULT-VALUE})")
    int port;

    @ArgGroup(exclusive = true)
    Storage storage = new Storage();

    @Option(names = "--latency", paramLabel = "DURATION", converter = DurationConverter.class, defaultValue = "0",
            description = {"answer every request DURATION after it arrived (or once its writes are on disk, if later),",
                    "standing for the network and replication of a real deployment; e.g. 1ms; at most 5s (default: none)"})
    Duration latency;

    @Option(names = "--worker-threads", paramLabel = "N",
            description = {"network threads, each serving its share of the connections; a long request (a scan of a",
                    "large collection) delays the others of its thread meanwhile (default: the number of cores)"})
    Integer workerThreads;

    static final class Storage {
        @Option(names = "--data", paramLabel = "DIR", description = "keep data in DIR (default: ./mongo2pc-data)")
        Path data;

        @Option(names = "--in-memory", description = "keep data in memory only")
        boolean inMemory;
    }

    @Override
    protected int run() throws InterruptedException {
        if (globals().uri() != null) {
            throw CliException.badInput("serve runs a server and takes no --uri (that names a server to connect to); "
                    + "use --port and --data");
        }
        if (port < 0 || port > 65535) {
            throw CliException.badInput("--port must be between 0 and 65535, got " + port);
        }
        if (latency.compareTo(Duration.ofSeconds(5)) > 0) {
            throw CliException.badInput("--latency must be at most 5s (the driver's connect timeout is 10s), got "
                    + DurationConverter.format(latency));
        }
        if (workerThreads != null && (workerThreads < 1 || workerThreads > 1024)) {
            throw CliException.badInput("--worker-threads must be between 1 and 1024, got " + workerThreads);
        }
        Path dir = storage.inMemory ? null : storage.data == null ? Connection.DEFAULT_DATA_DIR : storage.data;
        EmbeddedServer server;
        try {
            EmbeddedServer configured = (dir == null ? EmbeddedServer.inMemory() : EmbeddedServer.onDisk(dir)).withLatency(latency);
            if (workerThreads != null) {
                configured = configured.withWorkerThreads(workerThreads);
            }
            server = configured.start(port);
        } catch (Exception e) {
            String why = Connection.rootMessage(e);
            if (e instanceof BindException || why.contains("Address already in use")) {
                throw new CliException(ExitCodes.NOT_OK, "cannot listen on 127.0.0.1:" + port
                        + ": the port is in use (pick another with --port, or --port 0 for a free one)", e);
            }
            if (dir != null && (why.contains("in use") || why.toLowerCase(Locale.ROOT).contains("lock"))) {
                throw new CliException(ExitCodes.NOT_OK, "data directory " + dir + " is in use by another process: " + why, e);
            }
            throw new CliException(ExitCodes.NOT_OK, "cannot start the server on 127.0.0.1:" + port
                    + (dir == null ? "" : " with data in " + dir) + ": " + why, e);
        }
        Path uriFile = dir == null ? null : dir.resolve(Connection.URI_FILE);
        CountDownLatch stop = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            // Killed without our signal handler (e.g. inside a test harness): still clean up.
            Connection.deleteQuietly(uriFile);
            server.close();
        }, "mongo2pc-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (uriFile != null) {
                Connection.writeUriFile(uriFile, server.uri());
            }
            Signals.onStop(stop::countDown);
            out().println("mongo2pc server listening on " + server.uri() + " ("
                    + (dir == null ? "in memory" : "data in " + dir.toAbsolutePath().normalize())
                    + (latency.isZero() ? "" : ", every reply " + latencyText(latency) + " after its request")
                    + "); stop it with Ctrl-C or SIGTERM");
            out().flush();
            stop.await();
            out().println("mongo2pc server on " + server.uri() + " stopping");
            out().flush();
        } finally {
            Connection.deleteQuietly(uriFile);
            server.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway; closing twice is harmless
            }
        }
        return ExitCodes.OK;
    }

    private static String latencyText(Duration d) {
        return d.toNanos() % 1_000_000 == 0 ? DurationConverter.format(d) : d.toNanos() / 1e6 + "ms";
    }
}
