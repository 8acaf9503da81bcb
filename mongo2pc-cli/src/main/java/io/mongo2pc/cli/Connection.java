package io.mongo2pc.cli;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.embedded.EmbeddedServer;
import org.bson.Document;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The database a command talks to: the server named by {@code --uri}, or else the embedded server
 * with its data in {@code ./mongo2pc-data} (the one {@code serve} runs there if its
 * {@code server.uri} answers, else one started in this process for the command's duration).
 * Closing it closes the client, then the embedded server.
 */
public final class Connection implements AutoCloseable {
    /** Where a command without {@code --uri} keeps its data. */
    static final Path DEFAULT_DATA_DIR = Path.of("mongo2pc-data");
    /** The file {@code serve} writes into its data directory while it runs. */
    static final String URI_FILE = "server.uri";
    static final int SERVER_SELECTION_SECONDS = 5;

    private final MongoClient client;
    private final EmbeddedServer server;
    private final String uri;
    private final String description;
    private final Where where;
    /** The server.uri this connection wrote for other commands, deleted on close; or null. */
    private Path served;

    /**
     * Which server a command used and, for the embedded server, which data folder (null with
     * {@code --uri}: the server keeps its own): its first line and its {@code --json} keys say so.
     *
     * @param server the URI (password hidden), or {@code embedded} for a server this command started
     * @param data   the data folder's absolute path, or null
     * @param said   the same for people
     */
    record Where(String server, String data, String said) { }

    private Connection(MongoClient client, EmbeddedServer server, String uri, String description, Where where) {
        this.client = client;
        this.server = server;
        this.uri = uri;
        this.description = description;
        this.where = where;
    }

    /**
     * The server of {@code uri}, or else the embedded one on {@code ./mongo2pc-data}; with {@code serveOthers}, an embedded server this command starts is
     * also served to the other commands on the same folder (its URI in {@code server.uri}, as
     * {@code serve} does) for as long as the connection is open: a long-running command such as
     * {@code worker} must not lock the folder against {@code submit} or {@code status}. Without
     * {@code createData} (a command that only reads or acts on existing data), no data folder here
     * is bad input: it says where it looked and how to point at one, and creates nothing.
     */
    static Connection open(String uri, boolean serveOthers, boolean createData) {
        if (uri != null) {
            String shown = redact(uri);
            return new Connection(connect(uri, SERVER_SELECTION_SECONDS), null, uri, uri,
                    new Where(shown, null, "server " + shown + " (--uri)"));
        }
        Path dataDir = DEFAULT_DATA_DIR;
        String folder = dataDir.toAbsolutePath().normalize().toString();
        if (!createData && !Files.isDirectory(dataDir)) {
            throw CliException.badInput("no data here: without --uri, commands use the embedded server's data in "
                    + "./" + dataDir + ", and there is no " + folder + ". Run the command in the folder that holds "
                    + dataDir + ", or pass --uri mongodb://HOST:PORT of a running server (`mongo2pc serve --data DIR` "
                    + "runs one on a folder elsewhere); `mongo2pc accounts create` or `mongo2pc serve` here starts new data");
        }
        String running = runningServerUri(dataDir);
        if (running != null) {
            try {
                return new Connection(connect(running, 2), null, running,
                        running + " (the server running on ./" + dataDir + ")",
                        new Where(running, folder, "server " + running + ", the one serving " + folder));
            } catch (CliException stale) {
                // A server.uri left by a server that was killed: open the files ourselves below.
            }
        }
        EmbeddedServer server;
        try {
            server = EmbeddedServer.onDisk(dataDir).start(0);
        } catch (RuntimeException e) {
            String why = rootMessage(e);
            if (why.contains("in use") || why.toLowerCase(Locale.ROOT).contains("lock")) {
                throw new CliException(ExitCodes.NOT_OK, "the embedded data directory ./" + dataDir
                        + " is in use by another process (" + why + "). To share it, run `mongo2pc serve` on it "
                        + "(other commands here then connect to it by themselves) or pass --uri mongodb://127.0.0.1:PORT "
                        + "of a running server; or stop the other process", e);
            }
            throw new CliException(ExitCodes.NOT_OK, "cannot start the embedded server on ./" + dataDir + ": " + why, e);
        }
        try {
            Connection connection = new Connection(connect(server.uri(), SERVER_SELECTION_SECONDS), server, server.uri(),
                    "embedded server on ./" + dataDir + (serveOthers ? ", served at " + server.uri()
                            + " to other commands in this folder" : ""),
                    new Where("embedded", folder, "embedded server on " + folder + " (started for this command)"));
            if (serveOthers) {
                connection.served = dataDir.resolve(URI_FILE);
                writeUriFile(connection.served, server.uri());
            }
            return connection;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** Writes {@code uri} to {@code file} at once (a reader sees the old file or the whole new one). */
    static void writeUriFile(Path file, String uri) {
        try {
            Path tmp = file.resolveSibling(URI_FILE + ".tmp");
            Files.writeString(tmp, uri + System.lineSeparator(), StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new CliException(ExitCodes.NOT_OK, "cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    static void deleteQuietly(Path file) {
        if (file == null) {
            return;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a stale server.uri is detected by the next command (its server does not answer)
        }
    }

    /** The URI in {@code dataDir/server.uri}, or null. */
    static String runningServerUri(Path dataDir) {
        Path file = dataDir.resolve(URI_FILE);
        if (!Files.isRegularFile(file)) {
            return null;
        }
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).trim();
            return text.startsWith("mongodb://") ? text : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * A client for {@code uri} that has answered a ping; fails within {@code seconds} if the server
     * does not, or within the URI's own {@code serverSelectionTimeoutMS} when it gives one.
     */
    static MongoClient connect(String uri, int seconds) {
        return connect(uri, seconds, "--uri");
    }

    /** {@link #connect(String, int)} of a URI the user gave as {@code option}, which the messages name. */
    static MongoClient connect(String uri, int seconds, String option) {
        ConnectionString cs;
        try {
            cs = new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            throw CliException.badInput("invalid " + option + " '" + uri + "': " + Words.plain(e.getMessage()));
        }
        long selectionMs = cs.getServerSelectionTimeout() != null ? cs.getServerSelectionTimeout() : seconds * 1000L;
        long connectMs = cs.getConnectTimeout() != null ? cs.getConnectTimeout() : seconds * 1000L;
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(cs)
                .applicationName("mongo2pc-cli")
                .applyToClusterSettings(b -> b.serverSelectionTimeout(selectionMs, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.connectTimeout((int) connectMs, TimeUnit.MILLISECONDS))
                .build());
        try {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            return client;
        } catch (MongoException e) {
            client.close();
            throw new CliException(ExitCodes.NOT_OK, "cannot reach MongoDB at " + redact(cs)
                    + (option.equals("--uri") ? "" : " (" + option + ")") + " within "
                    + DurationConverter.format(java.time.Duration.ofMillis(selectionMs)) + ": " + why(e), e);
        }
    }

    /** The useful part of a driver error: for a server selection timeout, what the last connection attempt said. */
    static String why(MongoException e) {
        String message = e.getMessage() == null ? "no answer" : e.getMessage();
        Matcher m = Pattern.compile("caused by \\{([^}]*)\\}").matcher(message);
        String cause = null;
        while (m.find()) {
            cause = m.group(1);
        }
        if (cause == null) {
            m = Pattern.compile("exception=\\{([^}]*)\\}").matcher(message);
            if (m.find()) {
                cause = m.group(1);
            }
        }
        if (e instanceof MongoTimeoutException) {
            return "no server answered" + (cause == null ? "" : " (" + Words.plain(cause.trim()) + ")");
        }
        return Words.plain(firstLine(message));
    }

    private static String redact(ConnectionString cs) {
        String text = cs.getConnectionString();
        return cs.getPassword() == null ? text : text.replace(new String(cs.getPassword()), "****");
    }

    /** {@code uri} with its password hidden (as typed if it is no connection string: connecting then says why). */
    static String redact(String uri) {
        try {
            return redact(new ConnectionString(uri));
        } catch (IllegalArgumentException e) {
            return uri;
        }
    }

    /** The first line of a message, without the driver's long description of the cluster. */
    static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        String line = nl < 0 ? message : message.substring(0, nl);
        int cluster = line.indexOf(" Client view of cluster state");
        return cluster < 0 ? line : line.substring(0, cluster);
    }

    static String rootMessage(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !sb.toString().contains(t.getMessage())) {
                if (sb.length() > 0) {
                    sb.append(": ");
                }
                sb.append(t.getMessage());
            }
        }
        return sb.length() == 0 ? "no details" : firstLine(sb.toString());
    }

    public MongoClient client() {
        return client;
    }

    public String uri() {
        return uri;
    }

    /** Where the data is, for humans. */
    String description() {
        return description;
    }

    /** Which server and data folder this connection uses. */
    Where where() {
        return where;
    }

    public boolean embedded() {
        return server != null;
    }

    @Override
    public void close() {
        deleteQuietly(served); // first: no command may join a server that is about to stop
        try {
            client.close();
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }
}
