package io.mongo2pc.cli;

import com.mongodb.client.MongoClient;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.bank.Bank;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One command's connection with a {@link TransactionManager} and {@link Bank} built from the
 * global options. Closing it closes the connection (and the embedded server it started).
 */
public final class Session implements AutoCloseable {
    private final Connection connection;
    private final List<MongoClient> extraClients;
    private final String database;
    private final TransactionManager manager;
    private final Bank bank;

    private Session(Connection connection, List<MongoClient> extraClients, String database,
                    TransactionManager manager) {
        this.connection = connection;
        this.extraClients = extraClients;
        this.database = database;
        this.manager = manager;
        this.bank = new Bank(manager);
    }

    /** A session on {@code --db} for a command that only reads or acts on existing data. */
    static Session open(Main globals) {
        return open(globals, Map.of());
    }

    /** A session whose manager also reaches {@code targets} (name to URI), besides the default one. */
    static Session open(Main globals, Map<String, String> targets) {
        return open(globals, targets, globals.database(), false, false);
    }

    /**
     * A session on {@code database}; with {@code serveOthers}, an embedded server started here is
     * served to other commands too; without {@code createData}, no data folder here is bad input
     * ({@link Connection#open}).
     */
    static Session open(Main globals, Map<String, String> commandTargets, String database, boolean serveOthers,
                        boolean createData) {
        Map<String, String> targets = new java.util.LinkedHashMap<>(globals.targets()); // --target before the command
        targets.putAll(commandTargets);
        // Check the settings before connecting, so bad input fails fast with exit 2.
        newBuilder(null, database, globals.application(), globals.lease(), globals.retryTimeout());
        for (String name : targets.keySet()) {
            if (name.equals(DocumentRef.DEFAULT_TARGET) || name.isBlank() || name.contains("/")) {
                throw CliException.badInput("invalid --target name '" + name + "': give NAME=URI with a NAME other than "
                        + "'default' (the server of --uri) and without '/'");
            }
        }
        Connection connection = Connection.open(globals.uri(), serveOthers, createData);
        List<MongoClient> extra = new ArrayList<>();
        try {
            TransactionManagerBuilder builder = newBuilder(connection, database, globals.application(), globals.lease(),
                    globals.retryTimeout());
            for (Map.Entry<String, String> target : targets.entrySet()) {
                MongoClient client = Connection.connect(target.getValue(), Connection.SERVER_SELECTION_SECONDS,
                        "--target " + target.getKey());
                extra.add(client);
                builder.target(target.getKey(), client);
            }
            return new Session(connection, extra, database, builder.build());
        } catch (RuntimeException e) {
            extra.forEach(MongoClient::close);
            connection.close();
            throw e;
        }
    }

    private static TransactionManagerBuilder newBuilder(Connection connection, String database, String application,
                                                        Duration lease, Duration retryTimeout) {
        TransactionManagerBuilder builder = TransactionManager.builder();
        if (lease.isZero()) {
            throw CliException.badInput("--lease must be more than 0, e.g. 30s: it is how long an owner may stay silent");
        }
        try {
            builder.database(database).application(application).lease(lease).retryTimeout(retryTimeout);
        } catch (IllegalArgumentException e) {
            throw CliException.badInput(e.getMessage());
        }
        if (connection != null) {
            builder.target("default", connection.client());
        }
        // A command's transactions follow the library's default rules and end before the call
        // returns (done, as the one-shot commands print); bench and worker choose otherwise.
        return Bank.configure(builder).finishInBackground(false);
    }

    /**
     * Another manager on the same connection and database, e.g. a demo worker with its own
     * application name; with {@code tutorialRules}, every transaction by the tutorial's rules.
     */
    TransactionManager newManager(String application, Duration lease, CrashHook crashHook, boolean tutorialRules) {
        TransactionManagerBuilder builder = newBuilder(connection, database, application, lease, manager.settings().retryTimeout())
                .crashHook(crashHook);
        return (tutorialRules ? builder.twoRoundCommit(false) : builder).build();
    }

    /** Another manager on the same connection and database that finishes committed transactions in the background. */
    TransactionManager newBackgroundManager() {
        return newBenchManager(true, null, null, true);
    }

    /**
     * Another manager on the same connection and database, finishing in the background or not,
     * with {@code combinedRequestsInFlight} (null: the library's default), by the two-round commit
     * or the tutorial's rules ({@code twoRoundCommit}; null: the library's default), committing by
     * the transaction document's insert or not ({@code commitInsert}).
     */
    public TransactionManager newBenchManager(boolean finishInBackground, Integer combinedRequestsInFlight, Boolean twoRoundCommit,
                                              boolean commitInsert) {
        TransactionManagerBuilder builder = newBuilder(connection, database, manager.settings().application(),
                manager.settings().lease(), manager.settings().retryTimeout()).finishInBackground(finishInBackground);
        if (twoRoundCommit != null) {
            builder.twoRoundCommit(twoRoundCommit);
        }
        builder.commitInsert(commitInsert);
        if (combinedRequestsInFlight != null) {
            builder.combinedRequestsInFlight(combinedRequestsInFlight);
        }
        return builder.build();
    }

    public Connection connection() {
        return connection;
    }

    public TransactionManager manager() {
        return manager;
    }

    public Bank bank() {
        return bank;
    }

    public String database() {
        return database;
    }

    @Override
    public void close() {
        extraClients.forEach(MongoClient::close);
        connection.close();
    }
}
