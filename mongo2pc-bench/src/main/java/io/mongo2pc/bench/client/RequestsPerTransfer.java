package io.mongo2pc.bench.client;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.cli.bench.InteractiveTransfer;
import org.bson.BsonValue;
import org.bson.Document;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many requests a transfer sends, by command and collection, and how many document writes
 * they carry (the driver's command listener), with the client's and optionally the server's CPU
 * time per transfer (from /proc): random transfers among 1,000 accounts, first N unmeasured, then
 * N measured. With {@code interactive} last, each transfer is the body of {@code bench --mode
 * interactive} ({@code transact}: both accounts read in one request, the funds checked, both written).
 *
 * <pre>
 * CP="mongo2pc-bench/target/mongo2pc-bench-0.1.0-SNAPSHOT.jar:$(cat mongo2pc-bench/target/classpath.txt)"
 * java -cp "$CP" io.mongo2pc.bench.client.RequestsPerTransfer URI TWO_ROUND(true|false) THREADS N [BACKGROUND [SERVER_PID [COMMIT_INSERT [interactive]]]]
 * </pre>
 */
public final class RequestsPerTransfer {
    private static final int ACCOUNTS = 1_000;

    private RequestsPerTransfer() {
    }

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        boolean twoRound = Boolean.parseBoolean(args[1]);
        int threads = Integer.parseInt(args[2]);
        int n = Integer.parseInt(args[3]);
        boolean background = args.length > 4 && Boolean.parseBoolean(args[4]);
        String serverPid = args.length > 5 && !args[5].equals("-") ? args[5] : null;
        boolean commitInsert = args.length <= 6 || Boolean.parseBoolean(args[6]);
        boolean interactive = args.length > 7 && args[7].equals("interactive");
        Map<String, LongAdder> requests = new ConcurrentHashMap<>();
        Map<String, LongAdder> writes = new ConcurrentHashMap<>();
        AtomicBoolean counting = new AtomicBoolean();
        CommandListener listener = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (!counting.get()) {
                    return;
                }
                String key = event.getCommandName();
                BsonValue collection = event.getCommand().get(key);
                if (collection != null && collection.isString()) {
                    key += " " + collection.asString().getValue();
                }
                requests.computeIfAbsent(key, k -> new LongAdder()).increment();
                for (String field : List.of("updates", "documents", "deletes")) {
                    if (event.getCommand().containsKey(field)) {
                        writes.computeIfAbsent(key, k -> new LongAdder()).add(event.getCommand().getArray(field).size());
                    }
                }
            }
        };
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri)).addCommandListener(listener).build());
             TransactionManager manager = Bank.configure(TransactionManager.builder()
                     .database("requests_" + System.currentTimeMillis()).target("default", client))
                     .twoRoundCommit(twoRound).commitInsert(commitInsert).finishInBackground(background).build()) {
            Bank bank = new Bank(manager);
            List<Document> accounts = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                accounts.add(new Document("_id", "b" + i).append("balance", 1_000L).append("pendingTransactions", new ArrayList<>()));
            }
            bank.accounts().insertMany(accounts);
            String database = bank.accounts().getNamespace().getDatabaseName();
            Transfer transfer = interactive ? (from, to, amount) -> InteractiveTransfer.run(manager, database, from, to, amount)
                    : bank::transfer;
            run(transfer, manager, threads, n, background);
            long[] client0 = ticks("self");
            long[] server0 = serverPid == null ? new long[2] : ticks(serverPid);
            long start = System.nanoTime();
            counting.set(true);
            run(transfer, manager, threads, n, background);
            counting.set(false);
            double seconds = (System.nanoTime() - start) / 1e9;
            long[] client1 = ticks("self");
            long[] server1 = serverPid == null ? new long[2] : ticks(serverPid);
            System.out.printf("%stwo-round %s, %d threads, finish %s: %d transfers, %.0f/s%n", interactive ? "interactive, " : "",
                    twoRound, threads, background ? "background" : "inline", n, n / seconds);
            long total = 0;
            for (Map.Entry<String, LongAdder> e : new TreeMap<>(requests).entrySet()) {
                long count = e.getValue().sum();
                total += count;
                LongAdder carried = writes.get(e.getKey());
                System.out.printf("  %-34s %6.3f requests per transfer%s%n", e.getKey(), count / (double) n, carried == null ? ""
                        : String.format(", %.2f writes per transfer, %.1f per request", carried.sum() / (double) n, carried.sum() / (double) count));
            }
            System.out.printf("  %-34s %6.3f requests per transfer%n", "all", total / (double) n);
            System.out.printf("  CPU per transfer: client %.0f us (user %.0f, system %.0f)%s%n", us(client1[0] + client1[1] - client0[0] - client0[1], n),
                    us(client1[0] - client0[0], n), us(client1[1] - client0[1], n), serverPid == null ? ""
                            : String.format(", server %.0f us", us(server1[0] + server1[1] - server0[0] - server0[1], n)));
        }
    }

    /** One transfer of {@code amount} between two accounts. */
    private interface Transfer {
        Object run(String from, String to, long amount);
    }

    private static void run(Transfer transfer, TransactionManager manager, int threads, int n, boolean background) throws Exception {
        AtomicInteger issued = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<java.util.concurrent.Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            SplittableRandom random = new SplittableRandom(31L * t + 7);
            workers.add(pool.submit(() -> {
                while (issued.incrementAndGet() <= n) {
                    int from = random.nextInt(ACCOUNTS);
                    int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                    transfer.run("b" + from, "b" + to, 1 + random.nextInt(100));
                }
                return null;
            }));
        }
        pool.shutdown();
        for (var worker : workers) {
            worker.get();
        }
        pool.awaitTermination(1, TimeUnit.MINUTES);
        if (background && !manager.awaitFinished(Duration.ofMinutes(1))) {
            throw new IllegalStateException("transfers still not finished a minute after the run");
        }
    }

    /** User and system CPU time of process {@code pid} ("self" for this one), in clock ticks (1/100 s). */
    private static long[] ticks(String pid) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(") ") + 2).split(" ");
        return new long[]{Long.parseLong(fields[11]), Long.parseLong(fields[12])};
    }

    private static double us(long ticks, int n) {
        return ticks * 10_000.0 / n;
    }
}
