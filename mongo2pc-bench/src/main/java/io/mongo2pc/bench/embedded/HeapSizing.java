package io.mongo2pc.bench.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import org.bson.Document;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Heap a server in its own JVM needs for N small accounts {@code {_id: "acc-N", balance: 1000,
 * pendingTransactions: []}}: loads them, forces a full GC with jcmd and prints the live heap; for
 * {@code --data} it also restarts the server and prints the recovery time and file sizes.
 *
 * <pre>HeapSizing [--accounts 1000000] [--xmx 1g] (--in-memory | --data DIR)</pre>
 */
public final class HeapSizing {

    public static void main(String[] args) throws Exception {
        int accounts = 1_000_000;
        String xmx = null;
        String mode = "--in-memory";
        Path data = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--accounts" -> accounts = Integer.parseInt(args[++i]);
                case "--xmx" -> xmx = args[++i];
                case "--in-memory" -> mode = "--in-memory";
                case "--data" -> {
                    mode = "--data";
                    data = Path.of(args[++i]);
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        List<String> jvm = xmx == null ? List.of() : List.of("-Xmx" + xmx);
        long start = System.nanoTime();
        try (EmbeddedThroughput.ServerProcess server = EmbeddedThroughput.ServerProcess.start(mode, data, jvm);
             MongoClient client = MongoClients.create(server.uri)) {
            System.out.println("server " + mode + " " + jvm + " at " + server.uri + " pid " + server.process.pid());
            System.out.println("max heap of the server JVM: " + jcmd(server.process.pid(), "VM.flags").lines()
                    .flatMap(l -> Stream.of(l.split(" "))).filter(f -> f.startsWith("-XX:MaxHeapSize")).findFirst().orElse("?"));
            MongoCollection<Document> c = client.getDatabase("bank").getCollection("accounts");
            List<Document> batch = new ArrayList<>();
            for (int i = 0; i < accounts; i++) {
                batch.add(new Document("_id", "acc-" + i).append("balance", 1000).append("pendingTransactions", List.of()));
                if (batch.size() == 1000) {
                    c.insertMany(batch);
                    batch.clear();
                    if ((i + 1) % 100_000 == 0) {
                        System.out.printf(Locale.ROOT, "  %,d accounts loaded, %.1f s%n", i + 1, (System.nanoTime() - start) / 1e9);
                    }
                }
            }
            if (!batch.isEmpty()) {
                c.insertMany(batch);
            }
            System.out.printf(Locale.ROOT, "%,d accounts in %.1f s%n", c.countDocuments(), (System.nanoTime() - start) / 1e9);
            jcmd(server.process.pid(), "GC.run");
            System.out.println(jcmd(server.process.pid(), "GC.heap_info"));
        }
        if (data != null) {
            try (Stream<Path> files = Files.list(data)) {
                files.forEach(f -> System.out.printf(Locale.ROOT, "  %s: %,d bytes%n", f.getFileName(), f.toFile().length()));
            }
            long restart = System.nanoTime();
            try (EmbeddedThroughput.ServerProcess server = EmbeddedThroughput.ServerProcess.start(mode, data, jvm);
                 MongoClient client = MongoClients.create(server.uri)) {
                long count = client.getDatabase("bank").getCollection("accounts").countDocuments();
                System.out.printf(Locale.ROOT, "restart with %,d accounts: listening and counted after %.1f s%n", count,
                        (System.nanoTime() - restart) / 1e9);
                jcmd(server.process.pid(), "GC.run");
                System.out.println(jcmd(server.process.pid(), "GC.heap_info"));
            }
        }
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }
}
