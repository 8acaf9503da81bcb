package io.mongo2pc.bench.embedded;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Throughput of the embedded server in its own JVM ({@code ServerMain}), reached by the real driver
 * over loopback:
 * <ol>
 *   <li>simple updates by {@code _id} ({@code $inc}) against {@code --in-memory} and {@code --data}
 *       at 1, 4 and 16 client threads, side by side;</li>
 *   <li>guarded updates ({@code {_id: k, balance: {$gte: 1}, pendingTransactions: {$ne: t}}}) at
 *       100 and at 100,000 documents.</li>
 * </ol>
 * Options: {@code --seconds S} per measurement (default 4), {@code --warmup S} before each
 * measurement (default 3), {@code --server-warmup S} of load on each server before the first
 * measurement (default 20: profiling showed the server JVM's JIT compiler busy for about 20 s of
 * load, taking a third of the server's CPU while it runs),
 * {@code --threads 1,4,16}, {@code --big 100000}, {@code --simple-only}, {@code --guarded-only}, {@code --data-parent DIR} (where the
 * {@code --data} folder is created; default java.io.tmpdir). Prints progress, then a Markdown summary.
 */
public final class EmbeddedThroughput {

    private static int seconds = 4;
    private static int warmup = 3;
    private static int serverWarmup = 20;
    private static int[] threadCounts = {1, 4, 16};
    private static int bigDocs = 100_000;
    private static boolean simpleOnly;
    private static boolean guardedOnly;
    private static Path dataParent = Path.of(System.getProperty("java.io.tmpdir"));

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--server-warmup" -> serverWarmup = Integer.parseInt(args[++i]);
                case "--threads" -> threadCounts = Stream.of(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--big" -> bigDocs = Integer.parseInt(args[++i]);
                case "--simple-only" -> simpleOnly = true;
                case "--guarded-only" -> guardedOnly = true;
                case "--data-parent" -> dataParent = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        System.out.printf("machine: %d cores, %s %s, java %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.version"));

        fsyncLatency("before");

        // Both servers run at once and the measurements alternate between them (in-memory, on-disk,
        // in-memory, ...), so a change in the machine's load hits both alike; medians are reported.
        Map<String, Map<Integer, Double>> simple = guardedOnly ? Map.of() : simpleUpdates();

        Map<String, Map<Integer, Double>> guarded = new LinkedHashMap<>();
        for (String mode : simpleOnly ? List.<String>of() : List.of("--in-memory", "--data")) {
            Path data = mode.equals("--data") ? Files.createTempDirectory(dataParent, "mongo2pc-bench") : null;
            try (ServerProcess server = ServerProcess.start(mode, data)) {
                System.out.println("server " + mode + " at " + server.uri);
                try (MongoClient client = client(server.uri, 8)) {
                    // two collections of 100 and bigDocs accounts, measured alternately; medians reported
                    Map<Integer, MongoCollection<Document>> collections = new LinkedHashMap<>();
                    collections.put(100, load(client, "accounts100", 100));
                    collections.put(bigDocs, load(client, "accountsBig", bigDocs));
                    Map<Integer, List<Double>> samples = new LinkedHashMap<>();
                    for (int round = 0; round <= ROUNDS; round++) {
                        for (Map.Entry<Integer, MongoCollection<Document>> e : collections.entrySet()) {
                            int docs = e.getKey();
                            MongoCollection<Document> accounts = e.getValue();
                            double rate = measure("guarded updates " + mode + " docs=" + docs
                                    + (round == 0 ? " (JIT warm-up, not reported)" : " round " + round), 1, () -> {
                                String id = "acc-" + ThreadLocalRandom.current().nextInt(docs);
                                Bson filter = Filters.and(Filters.eq("_id", id), Filters.gte("balance", 1),
                                        Filters.ne("pendingTransactions", "t-" + id));
                                accounts.updateOne(filter, Updates.inc("balance", -1));
                            });
                            if (round > 0) {
                                samples.computeIfAbsent(docs, k -> new ArrayList<>()).add(rate);
                            }
                        }
                    }
                    Map<Integer, Double> rates = new LinkedHashMap<>();
                    samples.forEach((docs, values) -> rates.put(docs, median(values)));
                    guarded.put(mode, rates);
                }
            } finally {
                deleteTree(data);
            }
        }

        fsyncLatency("after");
        System.out.println();
        System.out.println("## Simple updates by _id (1000 accounts), updates/s, median of " + ROUNDS + " alternating rounds");
        System.out.println();
        System.out.println("| client threads | --in-memory | --data | --data / --in-memory |");
        System.out.println("|---:|---:|---:|---:|");
        for (int threads : guardedOnly ? new int[0] : threadCounts) {
            double mem = simple.get("--in-memory").get(threads);
            double disk = simple.get("--data").get(threads);
            System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %.2f |%n", threads, mem, disk, disk / mem);
        }
        System.out.println();
        System.out.println("## Guarded updates by _id (1 client thread), updates/s, median of " + ROUNDS + " alternating rounds");
        System.out.println();
        System.out.println("| server | 100 docs | " + String.format(Locale.ROOT, "%,d", bigDocs) + " docs | ratio |");
        System.out.println("|---|---:|---:|---:|");
        for (Map.Entry<String, Map<Integer, Double>> e : guarded.entrySet()) {
            double small = e.getValue().get(100);
            double big = e.getValue().get(bigDocs);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | %.2f |%n", e.getKey(), small, big, big / small);
        }
    }

    static MongoClient client(String uri, int poolSize) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToConnectionPoolSettings(p -> p.maxSize(poolSize))
                .build());
    }

    /** Fills accounts with {@code docs} accounts acc-0..acc-(docs-1), adding only the missing ones. */
    static MongoCollection<Document> load(MongoClient client, int docs) {
        return load(client, "accounts", docs);
    }

    private static MongoCollection<Document> load(MongoClient client, String collection, int docs) {
        MongoCollection<Document> accounts = client.getDatabase("bench").getCollection(collection);
        long existing = accounts.countDocuments();
        List<Document> batch = new ArrayList<>();
        for (long i = existing; i < docs; i++) {
            batch.add(new Document("_id", "acc-" + i).append("balance", 1_000_000_000).append("pendingTransactions", List.of()));
            if (batch.size() == 1000) {
                accounts.insertMany(batch, new InsertManyOptions().ordered(true));
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            accounts.insertMany(batch);
        }
        System.out.printf("loaded %,d accounts%n", accounts.countDocuments());
        return accounts;
    }

    private static final int ROUNDS = 3;

    /** Simple updates on both servers, alternating; returns mode -> threads -> median updates/s. */
    private static Map<String, Map<Integer, Double>> simpleUpdates() throws Exception {
        Map<String, Map<Integer, Double>> simple = new LinkedHashMap<>();
        Path simpleData = Files.createTempDirectory(dataParent, "mongo2pc-bench");
        try (ServerProcess memory = ServerProcess.start("--in-memory", null);
             ServerProcess disk = ServerProcess.start("--data", simpleData);
             MongoClient memoryClient = client(memory.uri, 32);
             MongoClient diskClient = client(disk.uri, 32)) {
            Map<String, ServerProcess> servers = Map.of("--in-memory", memory, "--data", disk);
            Map<String, MongoCollection<Document>> collections = new LinkedHashMap<>();
            collections.put("--in-memory", load(memoryClient, 1000));
            collections.put("--data", load(diskClient, 1000));
            for (Map.Entry<String, MongoCollection<Document>> e : collections.entrySet()) {
                MongoCollection<Document> accounts = e.getValue();
                measure("JIT warm-up " + e.getKey() + " (not reported)", 16, serverWarmup, seconds,
                        simpleUpdate(accounts), new long[1]);
            }
            for (int threads : threadCounts) {
                Map<String, List<Double>> samples = new LinkedHashMap<>();
                for (int round = 1; round <= ROUNDS; round++) {
                    for (Map.Entry<String, MongoCollection<Document>> e : collections.entrySet()) {
                        MongoCollection<Document> accounts = e.getValue();
                        ProcessHandle server = servers.get(e.getKey()).process.toHandle();
                        long cpuBefore = cpuNanos(server);
                        long[] ops = new long[1];
                        double rate = measure("simple updates " + e.getKey() + " threads=" + threads + " round " + round,
                                threads, warmup, seconds, simpleUpdate(accounts), ops);
                        long cpu = cpuNanos(server) - cpuBefore;
                        System.out.printf(Locale.ROOT, "    server CPU per update (incl. warm-up): %.0f us%n", cpu / 1e3 / Math.max(1, ops[0]));
                        samples.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(rate);
                    }
                }
                samples.forEach((mode, rates) -> simple.computeIfAbsent(mode, k -> new LinkedHashMap<>()).put(threads, median(rates)));
            }
        } finally {
            deleteTree(simpleData);
        }
        return simple;
    }


    /** The disk's latency for a small append plus force, which bounds what a durable request can take. */
    private static void fsyncLatency(String when) throws IOException {
        Path file = Files.createTempFile(dataParent, "fsync", ".bin");
        long[] micros = new long[200];
        try (FileChannel channel = FileChannel.open(file,
                StandardOpenOption.WRITE)) {
            ByteBuffer record = ByteBuffer.allocate(100);
            for (int i = 0; i < micros.length; i++) {
                record.clear();
                long start = System.nanoTime();
                channel.write(record);
                channel.force(false);
                micros[i] = (System.nanoTime() - start) / 1000;
            }
        } finally {
            Files.deleteIfExists(file);
        }
        Arrays.sort(micros);
        System.out.printf(Locale.ROOT, "fsync latency %s (100-byte append + force, %d samples in %s): median %d us, p90 %d us%n",
                when, micros.length, dataParent, micros[micros.length / 2], micros[micros.length * 9 / 10]);
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    static long cpuNanos(ProcessHandle process) {
        return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    private static double measure(String name, int threads, Runnable operation) throws InterruptedException {
        return measure(name, threads, warmup, seconds, operation, new long[1]);
    }

    /** One simple update: {@code $inc} of a random account's balance among acc-0..acc-999, by {@code _id}. */
    static Runnable simpleUpdate(MongoCollection<Document> accounts) {
        return () -> {
            String id = "acc-" + ThreadLocalRandom.current().nextInt(1000);
            accounts.updateOne(Filters.eq("_id", id), Updates.inc("balance", 1));
        };
    }

    /**
     * Runs the operation on {@code threads} threads for {@code warmupSeconds} unmeasured, then
     * {@code seconds} measured; returns ops/s measured; totalOps[0] = all ops incl. warm-up.
     */
    static double measure(String name, int threads, int warmupSeconds, int seconds, Runnable operation, long[] totalOps)
            throws InterruptedException {
        LongAdder all = new LongAdder();
        LongAdder count = new LongAdder();
        AtomicBoolean counting = new AtomicBoolean(false);
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                while (running.get()) {
                    operation.run();
                    all.increment();
                    if (counting.get()) {
                        count.increment();
                    }
                }
            });
            worker.start();
            workers.add(worker);
        }
        Thread.sleep(TimeUnit.SECONDS.toMillis(warmupSeconds));
        counting.set(true);
        long start = System.nanoTime();
        for (int s = 0; s < seconds; s++) {
            Thread.sleep(1000);
            System.out.printf(Locale.ROOT, "  %s: %ds, %,d ops%n", name, s + 1, count.sum());
        }
        long ops = count.sum();
        double elapsed = (System.nanoTime() - start) / 1e9;
        running.set(false);
        for (Thread worker : workers) {
            worker.join();
        }
        totalOps[0] = all.sum();
        double rate = ops / elapsed;
        System.out.printf(Locale.ROOT, "%s: %,.0f ops/s%n", name, rate);
        return rate;
    }

    static void deleteTree(Path dir) throws IOException {
        if (dir == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** ServerMain in its own JVM with this JVM's classpath. */
    static final class ServerProcess implements AutoCloseable {
        final Process process;
        final String uri;

        private ServerProcess(Process process, String uri) {
            this.process = process;
            this.uri = uri;
        }

        static ServerProcess start(String mode, Path data) throws IOException {
            return start(mode, data, List.of());
        }

        static ServerProcess start(String mode, Path data, List<String> jvmOptions) throws IOException {
            return start(mode, data, jvmOptions, null, List.of());
        }

        /** As above, with {@code classpathPrefix} (if not null) ahead of this JVM's classpath. */
        static ServerProcess start(String mode, Path data, List<String> jvmOptions, String classpathPrefix,
                                   List<String> serverOptions) throws IOException {
            String classpath = System.getProperty("java.class.path");
            if (classpathPrefix != null) {
                classpath = classpathPrefix + File.pathSeparator + classpath;
            }
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(jvmOptions);
            command.addAll(List.of("-cp", classpath,
                    "io.mongo2pc.embedded.ServerMain", "--port", "0", mode));
            if (data != null) {
                command.add(data.toString());
            }
            command.addAll(serverOptions);
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            // if the benchmark is interrupted, do not leave the server running
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null) {
                int at = line.indexOf("mongodb://127.0.0.1:");
                if (at >= 0) {
                    String uri = line.substring(at).split("\\s")[0];
                    Thread drain = new Thread(() -> {
                        try {
                            while (out.readLine() != null) {
                                // discard; the server logs warnings only
                            }
                        } catch (IOException e) {
                            // the server is gone
                        }
                    });
                    drain.setDaemon(true);
                    drain.start();
                    return new ServerProcess(process, uri);
                }
                System.out.println("server: " + line);
            }
            throw new IOException("ServerMain exited with " + process.onExit().join().exitValue() + " before listening");
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }
}
