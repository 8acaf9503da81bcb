package io.mongo2pc.bench.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import org.bson.Document;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Simple updates by {@code _id} ({@code $inc}, 1,000 documents) against several embedded servers
 * side by side, each in its own JVM with its own options: measurements alternate between them
 * round by round, so a change in the machine's load hits all alike; prints each round, the medians
 * and each server's per-round ratio to the first.
 *
 * <p>Usage: {@code ServerVariants [--threads 16] [--seconds 3] [--rounds 6] [--warmup 15] SERVER...}
 * where each SERVER is one argument: {@code --in-memory} or {@code --data}, then JVM options, options
 * of {@code ServerMain} written {@code --name=value}, and optionally {@code cp=JAR} to put an older
 * build of a module ahead of the classpath, e.g. {@code "--data cp=/tmp/old/mongo2pc-embedded.jar"}
 * or {@code "--data --commit-delay-micros=0"}.
 */
public final class ServerVariants {

    public static void main(String[] args) throws Exception {
        int threads = 16;
        int seconds = 3;
        int rounds = 6;
        int warmup = 15;
        List<String> specs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                default -> specs.add(args[i]);
            }
        }
        if (specs.isEmpty()) {
            throw new IllegalArgumentException("name at least one server, e.g. \"--in-memory\" \"--data\"");
        }
        System.out.printf("machine: %d cores; %d client threads, %d rounds of %d s%n",
                Runtime.getRuntime().availableProcessors(), threads, rounds, seconds);
        List<Server> servers = new ArrayList<>();
        try {
            for (String spec : specs) {
                servers.add(Server.start(spec));
            }
            for (Server server : servers) {
                EmbeddedThroughput.measure("JIT warm-up of [" + server.spec + "] (not reported)", threads, 1, warmup,
                        EmbeddedThroughput.simpleUpdate(server.accounts), new long[1]);
            }
            for (int round = 1; round <= rounds; round++) {
                for (Server server : servers) {
                    long cpuBefore = EmbeddedThroughput.cpuNanos(server.process.process.toHandle());
                    long[] allOps = new long[1];
                    double rate = EmbeddedThroughput.measure("round " + round + " [" + server.spec + "]", threads, 1,
                            seconds, EmbeddedThroughput.simpleUpdate(server.accounts), allOps);
                    long cpu = EmbeddedThroughput.cpuNanos(server.process.process.toHandle()) - cpuBefore;
                    server.rates.add(rate);
                    server.cpuPerUpdate.add(cpu / 1e3 / allOps[0]);
                    System.out.printf(Locale.ROOT, "    server CPU per update (incl. the 1 s warm-up): %.1f us%n",
                            cpu / 1e3 / allOps[0]);
                }
            }
            System.out.println();
            System.out.println("| server | updates/s (median) | server CPU per update (median) | / first, per round | / first (median) |");
            System.out.println("|---|---:|---:|---|---:|");
            Server first = servers.get(0);
            for (Server server : servers) {
                List<Double> ratios = new ArrayList<>();
                for (int r = 0; r < rounds; r++) {
                    ratios.add(server.rates.get(r) / first.rates.get(r));
                }
                StringBuilder perRound = new StringBuilder();
                for (double ratio : ratios) {
                    perRound.append(perRound.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", ratio));
                }
                System.out.printf(Locale.ROOT, "| `%s` | %,.0f | %.1f µs | %s | %.2f |%n", server.spec,
                        EmbeddedThroughput.median(server.rates), EmbeddedThroughput.median(server.cpuPerUpdate),
                        perRound, EmbeddedThroughput.median(ratios));
            }
        } finally {
            for (Server server : servers) {
                server.close();
            }
        }
    }

    private static final class Server implements AutoCloseable {
        final String spec;
        final EmbeddedThroughput.ServerProcess process;
        final MongoClient client;
        final MongoCollection<Document> accounts;
        final Path data;
        final List<Double> rates = new ArrayList<>();
        final List<Double> cpuPerUpdate = new ArrayList<>();

        private Server(String spec, EmbeddedThroughput.ServerProcess process, Path data) {
            this.spec = spec;
            this.process = process;
            this.data = data;
            this.client = EmbeddedThroughput.client(process.uri, 32);
            this.accounts = EmbeddedThroughput.load(client, 1000);
        }

        static Server start(String spec) throws IOException {
            List<String> words = new ArrayList<>(Arrays.asList(spec.trim().split("\\s+")));
            String mode = words.remove(0);
            if (!mode.equals("--in-memory") && !mode.equals("--data")) {
                throw new IllegalArgumentException("a server starts with --in-memory or --data: " + spec);
            }
            String classpathPrefix = null;
            List<String> jvmOptions = new ArrayList<>();
            List<String> serverOptions = new ArrayList<>();
            for (String word : words) {
                if (word.startsWith("cp=")) {
                    classpathPrefix = word.substring(3);
                } else if (word.startsWith("--") && word.contains("=")) {
                    serverOptions.addAll(List.of(word.split("=", 2)));
                } else {
                    jvmOptions.add(word);
                }
            }
            Path data = mode.equals("--data") ? Files.createTempDirectory("mongo2pc-variants") : null;
            return new Server(spec, EmbeddedThroughput.ServerProcess.start(mode, data, jvmOptions, classpathPrefix,
                    serverOptions), data);
        }

        @Override
        public void close() throws Exception {
            client.close();
            process.close();
            EmbeddedThroughput.deleteTree(data);
        }
    }
}
