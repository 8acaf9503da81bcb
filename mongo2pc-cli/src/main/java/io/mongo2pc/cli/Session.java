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
    private final String database;
    private final TransactionManager manager;
    private final Bank bank;

    private Session(Connection connection, String database, TransactionManager manager) {
        this.connection = connection;
        this.database = database;
        this.manager = manager;
        this.bank = new Bank(manager);
    }

    static Session open(Main globals) {
        // Check the settings before connecting, so bad input fails fast with exit 2.
        newBuilder(null, globals.database(), globals.application(), globals.lease());
        Connection connection = Connection.open(globals.uri());
        try {
            return new Session(connection, globals.database(),
                    newBuilder(connection, globals.database(), globals.application(), globals.lease()).build());
        } catch (RuntimeException e) {
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
        connection.close();
    }
}
