package io.mongo2pc.cli.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import io.mongo2pc.embedded.ProcessCost;
import org.bson.Document;

/**
 * What bench's measured phase cost beside its speed: CPU time and context switches of this
 * process (the client) and, when the server reports its own ({@code serverStatus.mongo2pc}, as the
 * embedded server does), of the server's. With the embedded server inside this process the
 * client's figures include the server's and no separate server figure is given.
 */
final class RunCost {

    private final MongoClient client;
    private final boolean serverInProcess;
    private final ProcessCost clientAtStart;
    private final ProcessCost serverAtStart;

    private RunCost(MongoClient client, boolean serverInProcess) {
        this.client = client;
        this.serverInProcess = serverInProcess;
        this.serverAtStart = serverInProcess ? null : serverCost(client);
        this.clientAtStart = ProcessCost.now();
    }

    /** Starts counting now. */
    static RunCost start(MongoClient client, boolean serverInProcess) {
        return new RunCost(client, serverInProcess);
    }

    /** What was spent since the start, on each side. */
    Spent end() {
        ProcessCost clientSpent = ProcessCost.now().since(clientAtStart);
        ProcessCost serverNow = serverAtStart == null ? null : serverCost(client);
        return new Spent(clientSpent, serverNow == null ? null : serverNow.since(serverAtStart), serverInProcess);
    }

    /** The server's own cost so far, or null when it does not report one (a MongoDB server). */
    private static ProcessCost serverCost(MongoClient client) {
        try {
            Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            if (status.get("mongo2pc") instanceof Document cost
                    && cost.get("processCpuMicros") instanceof Number cpu && cost.get("contextSwitches") instanceof Number switches) {
                return new ProcessCost(cpu.longValue() < 0 ? -1 : cpu.longValue() * 1_000, switches.longValue());
            }
            return null;
        } catch (MongoException e) {
            return null; // not allowed to ask, or unknown: the run goes on without the server's figures
        }
    }

    /**
     * The cost of a phase.
     *
     * @param server null when the server did not report its own
     * @param serverInProcess the client's figures include the server's
     */
    record Spent(ProcessCost client, ProcessCost server, boolean serverInProcess) {

        /** Adds the per-operation figures to bench's JSON: keys only for what is known. */
        void putPerOperation(ObjectNode node, long operations) {
            if (operations <= 0) {
                return;
            }
            put(node, "clientCpuUsPerTransfer", client.cpuNanos() / 1_000.0, client.cpuNanos(), operations);
            put(node, "clientContextSwitchesPerTransfer", client.contextSwitches(), client.contextSwitches(), operations);
            if (server != null) {
                put(node, "serverCpuUsPerTransfer", server.cpuNanos() / 1_000.0, server.cpuNanos(), operations);
                put(node, "serverContextSwitchesPerTransfer", server.contextSwitches(), server.contextSwitches(), operations);
            }
            node.put("serverInProcess", serverInProcess);
        }

        private static void put(ObjectNode node, String key, double amount, long raw, long operations) {
            if (raw >= 0) {
                node.put(key, Math.round(amount / operations * 100) / 100.0);
            }
        }

        /** One line for people: the cost per operation on each side, as far as known. */
        String describe(long operations) {
            if (operations <= 0 || client.cpuNanos() < 0) {
                return "cost: not measured";
            }
            StringBuilder line = new StringBuilder(String.format("cost per operation: %s %.0f µs CPU",
                    serverInProcess ? "client and server (one process)" : "client", client.cpuNanos() / 1e3 / operations));
            if (client.contextSwitches() >= 0) {
                line.append(String.format(", %.1f context switches", (double) client.contextSwitches() / operations));
            }
            if (server != null && server.cpuNanos() >= 0) {
                line.append(String.format("; server %.0f µs CPU", server.cpuNanos() / 1e3 / operations));
                if (server.contextSwitches() >= 0) {
                    line.append(String.format(", %.1f context switches", (double) server.contextSwitches() / operations));
                }
            }
            return line.toString();
        }
    }
}
