package io.mongo2pc.cli;

import io.mongo2pc.CrashHook;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;

import java.time.Duration;

/**
 * One command's connection with a {@link TransactionManager} and {@link Bank} built from the
 * global options. Closing it closes the connection (and the embedded server it started).
 */
final class Session implements AutoCloseable {
    private final Connection connection;
    private final java.util.List<com.mongodb.client.MongoClient> extraClients;
    private final String database;
    private final TransactionManager manager;
    private final Bank bank;

    private Session(Connection connection, java.util.List<com.mongodb.client.MongoClient> extraClients, String database,
                    TransactionManager manager) {
        this.connection = connection;
        this.extraClients = extraClients;
        this.database = database;
        this.manager = manager;
        this.bank = new Bank(manager);
    }

    static Session open(Main globals) {
        return open(globals, java.util.Map.of());
    }

    /** A session whose manager also reaches {@code targets} (name to URI), besides the default one. */
    static Session open(Main globals, java.util.Map<String, String> targets) {
        // Check the settings before connecting, so bad input fails fast with exit 2.
        newBuilder(null, globals.database(), globals.application(), globals.lease());
        for (String name : targets.keySet()) {
            if (name.equals(io.mongo2pc.DocumentRef.DEFAULT_TARGET) || name.isBlank() || name.contains("/")) {
                throw CliException.badInput("invalid target name '" + name + "' (the default target is --uri)");
            }
        }
        Connection connection = Connection.open(globals.uri());
        java.util.List<com.mongodb.client.MongoClient> extra = new java.util.ArrayList<>();
        try {
            TransactionManager.Builder builder = newBuilder(connection, globals.database(), globals.application(), globals.lease());
            for (java.util.Map.Entry<String, String> target : targets.entrySet()) {
                com.mongodb.client.MongoClient client = Connection.connect(target.getValue(), Connection.SERVER_SELECTION_SECONDS);
                extra.add(client);
                builder.target(target.getKey(), client);
            }
            return new Session(connection, extra, globals.database(), builder.build());
        } catch (RuntimeException e) {
            extra.forEach(com.mongodb.client.MongoClient::close);
            connection.close();
            throw e;
        }
    }

    private static TransactionManager.Builder newBuilder(Connection connection, String database, String application,
                                                        Duration lease) {
        TransactionManager.Builder builder = TransactionManager.builder();
        try {
            builder.database(database).application(application).lease(lease);
        } catch (IllegalArgumentException e) {
            throw CliException.badInput(e.getMessage());
        }
        if (connection != null) {
            builder.target("default", connection.client());
        }
        return Bank.configure(builder);
    }

    /** Another manager on the same connection and database, e.g. a demo worker with its own application name. */
    TransactionManager newManager(String application, Duration lease, CrashHook crashHook) {
        return newBuilder(connection, database, application, lease).crashHook(crashHook).build();
    }

    /** Another manager on the same connection and database that finishes committed transactions in the background. */
    TransactionManager newBackgroundManager() {
        return newBuilder(connection, database, manager.settings().application(), manager.settings().lease())
                .finishInBackground(true).build();
    }

    Connection connection() {
        return connection;
    }

    TransactionManager manager() {
        return manager;
    }

    Bank bank() {
        return bank;
    }

    String database() {
        return database;
    }

    @Override
    public void close() {
        extraClients.forEach(com.mongodb.client.MongoClient::close);
        connection.close();
    }
}
