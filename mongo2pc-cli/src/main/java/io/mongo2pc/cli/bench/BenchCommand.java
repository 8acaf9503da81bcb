package io.mongo2pc.cli.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Numbers;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.bank.TutorialClient;
import io.mongo2pc.cli.BaseCommand;
import io.mongo2pc.cli.CliException;
import io.mongo2pc.cli.DurationConverter;
import io.mongo2pc.cli.ExitCodes;
import io.mongo2pc.cli.Finish;
import io.mongo2pc.cli.Json;
import io.mongo2pc.cli.Session;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code bench}: a closed-economy load (YCSB+T): random transfers between random accounts, whose
 * total must not change. Modes: {@code library} (mongo2pc transfers), {@code interactive} (a
 * transfer written as a body of {@code transact}: {@link InteractiveTransfer}), {@code tutorial} (the
 * tutorial's eight writes by hand, {@link TutorialClient}) and {@code raw} (one update by _id
 * per operation: the ceiling). Creates its own accounts and refuses a database that holds some.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Closed-economy load: random transfers between random accounts; prints throughput, p50/p99 latency",
                "and the YCSB+T anomaly score |initial total - final total| / operations. Creates --accounts accounts in --db",
                "and refuses a database that already holds accounts (a user's data is never touched)."})
public final class BenchCommand extends BaseCommand {
    enum Mode { library, tutorial, raw, interactive }

    private static final long OPENING = 1_000;
    private static final int MAX_AMOUNT = 100;

    @Option(names = "--accounts", paramLabel = "N", description = "accounts to create (default: ${DEFAULT-VALUE})")
    int accounts = 1_000;

    @Option(names = "--threads", paramLabel = "T", description = "client threads (default: ${DEFAULT-VALUE})")
    int threads = 16;

    @Option(names = "--duration", paramLabel = "D", converter = DurationConverter.class,
            description = "how long to run (default 10s unless --transfers is given)")
    Duration duration;

    @Option(names = "--transfers", paramLabel = "K", description = "stop after K operations instead of after --duration")
    Long transfers;

    @Option(names = "--mode", paramLabel = "MODE", description = {"library, interactive (a transfer as a transact body: read both",
            "accounts, check, write both), tutorial or raw (default: ${DEFAULT-VALUE})"})
    Mode mode = Mode.library;

    @Option(names = "--finish", paramLabel = "HOW", description = {"library and interactive modes: inline (a transfer returns done) or background",
            "(it returns at its commit point; one thread releases markers and marks many transfers done per request;",
            "the run's time includes finishing them all) (default: ${DEFAULT-VALUE})"})
    Finish finish = Finish.inline;

    @Option(names = "--combined-requests", paramLabel = "N", description = {"library and interactive modes: the most combined write requests out at once per",
            "collection: writes of concurrent transfers share requests (group commit) (default: the library's, "
                    + TransactionManagerBuilder.DEFAULT_COMBINED_REQUESTS_IN_FLIGHT + ")"})
    Integer combinedRequests;

    @Option(names = "--rules", paramLabel = "1|2", description = {"library mode: 2, transfers by the two-round commit (the library's",
            "default: both prepares at once, then the commit as the transaction document's insert; credits after the commit point),",
            "or 1, the tutorial's rules (debit, credit, then the commit) (default: 2)"})
    Integer rules;

    @Option(names = "--two-round", description = "library mode: the same as --rules 2")
    boolean twoRoundFlag;

    @Option(names = "--no-commit-insert", description = {"library mode, two-round commit: insert the transaction document pending beside the",
            "prepares and commit it by a compare-and-set"})
    boolean noCommitInsert;

    /** True if the run's transfers follow the two-round commit (set by {@link #run} from --rules and --two-round). */
    private boolean twoRound;

    @Option(names = "--warmup", paramLabel = "D", converter = DurationConverter.class,
            description = "load run first and not measured, with --duration (default 3s; 0 for none)")
    Duration warmup;

    @Option(names = "--seed", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "draw throughput and latency over time")
    Path plot;

    @Option(names = "--json", description = {"print {\"mode\",\"threads\",\"committed\",\"canceled\",\"seconds\",\"tps\",\"p50Ms\",\"p99Ms\",\"anomaly\",",
            "\"rttMs\",\"p50RoundTrips\",\"twoRound\",\"commitInsert\",\"p999Ms\",\"clientCpuUsPerTransfer\",\"clientContextSwitchesPerTransfer\",",
            "\"serverCpuUsPerTransfer\",\"serverContextSwitchesPerTransfer\",\"serverInProcess\"}: rttMs is the median round trip of a ping right",
            "after the run, p50RoundTrips p50Ms in those; the costs are of the measured phase (the server's when it reports them,",
            "as the embedded server does; with the embedded server in this process the client's include it)"})
    boolean json;

    @Override
    protected boolean json() {
        return json;
    }

    @Override
    protected int run() throws Exception {
        if (accounts < 2 || accounts > 10_000_000) {
            throw CliException.badInput("--accounts must be between 2 and 10000000, got " + accounts);
        }
        if (threads < 1 || threads > 1_024) {
            throw CliException.badInput("--threads must be between 1 and 1024, got " + threads);
        }
        if (finish == Finish.background && withoutManager(mode)) {
            throw CliException.badInput("--finish background applies to --mode library and interactive only");
        }
        if (twoRoundFlag && mode != Mode.library) {
            throw CliException.badInput("--two-round applies to --mode library only");
        }
        if (rules != null && mode != Mode.library) {
            throw CliException.badInput("--rules applies to --mode library only");
        }
        if (rules != null && rules != 1 && rules != 2) {
            throw CliException.badInput("--rules must be 1 (the tutorial's) or 2 (the two-round commit), got " + rules);
        }
        if (twoRoundFlag && rules != null && rules == 1) {
            throw CliException.badInput("--two-round and --rules 1 contradict each other: give one");
        }
        twoRound = mode == Mode.library && (rules == null || rules == 2) || mode == Mode.interactive;
        if (noCommitInsert && !twoRound) {
            throw CliException.badInput("--no-commit-insert applies to the two-round commit only (--mode library, --rules 2)");
        }
        if (combinedRequests != null && withoutManager(mode)) {
            throw CliException.badInput("--combined-requests applies to --mode library and interactive only");
        }
        if (combinedRequests != null && (combinedRequests < 1 || combinedRequests > 1_000)) {
            throw CliException.badInput("--combined-requests must be between 1 and 1000, got " + combinedRequests);
        }
        if (duration != null && transfers != null) {
            throw CliException.badInput("give --duration or --transfers, not both");
        }
        if (transfers != null && transfers < 1) {
            throw CliException.badInput("--transfers must be at least 1, got " + transfers);
        }
        Duration runFor = transfers == null ? (duration == null ? Duration.ofSeconds(10) : duration) : null;
        if (runFor != null && (runFor.isZero() || runFor.isNegative())) {
            throw CliException.badInput("--duration must be positive");
        }
        if (plot != null) {
            Path folder = plot.toAbsolutePath().getParent();
            if (Files.isDirectory(plot) || folder == null || !Files.isDirectory(folder) || !Files.isWritable(folder)) {
                throw CliException.badInput("--plot " + plot + ": cannot write a file there (checked before the run, not after it)");
            }
        }
        try (Session session = openCreatingData(java.util.Map.of());
             TransactionManager own = mode == Mode.library || mode == Mode.interactive
                     ? session.newBenchManager(finish == Finish.background, combinedRequests, twoRound, !noCommitInsert) : null) {
            Bank bank = own == null ? session.bank() : new Bank(own);
            MongoCollection<Document> accountsColl = bank.accounts();
            if (accountsColl.countDocuments() > 0) {
                throw CliException.badInput("database " + session.database() + " already holds accounts; bench creates its own"
                        + " and never touches existing data: give it an empty database with --db");
            }
            createAccounts(accountsColl);
            err().flush();
            long initialTotal = OPENING * accounts;
            TransactionManagerSettings settings = session.manager().settings();
            MongoCollection<Document> transactionsColl = settings.target(DocumentRef.DEFAULT_TARGET)
                    .getDatabase(settings.database()).getCollection(settings.transactionsCollection())
                    .withWriteConcern(settings.writeConcern()).withReadConcern(settings.readConcern());
            TutorialClient tutorial = new TutorialClient(accountsColl, transactionsColl, settings.application());

            Recorder latencies = new Recorder(3);
            AtomicLong committed = new AtomicLong();
            AtomicLong canceled = new AtomicLong();
            AtomicLong issued = new AtomicLong();
            AtomicLong warmOps = new AtomicLong();
            // Warm-up (JIT of client and server) runs the same load but is not measured.
            Duration warm = runFor == null ? Duration.ZERO : warmup == null ? Duration.ofSeconds(3) : warmup;
            long warmEnd = System.nanoTime() + warm.toNanos();
            AtomicBoolean measuring = new AtomicBoolean(warm.isZero());
            long start = warmEnd;
            long deadline = runFor == null ? Long.MAX_VALUE : start + runFor.toNanos();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                SplittableRandom random = new SplittableRandom(seed + t);
                workers.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline && (transfers == null || issued.incrementAndGet() <= transfers)) {
                        int from = random.nextInt(accounts);
                        int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
                        long amount = 1 + random.nextInt(MAX_AMOUNT);
                        long t0 = System.nanoTime();
                        boolean done = switch (mode) {
                            case library -> {
                                TransactionOutcome outcome = bank.transfer(id(from), id(to), amount);
                                yield outcome.isCommitted();
                            }
                            case interactive -> InteractiveTransfer.run(own, session.database(), id(from), id(to), amount);
                            case tutorial -> tutorial.transfer(id(from), id(to), amount);
                            case raw -> accountsColl.updateOne(new Document("_id", id(from)),
                                    new Document("$inc", new Document("rawOps", 1))).getMatchedCount() == 1;
                        };
                        if (!measuring.get() && System.nanoTime() >= warmEnd) {
                            measuring.set(true);
                        }
                        if (measuring.get()) {
                            latencies.recordValue(Math.max(1, (System.nanoTime() - t0) / 1_000));
                            (done ? committed : canceled).incrementAndGet();
                        } else {
                            warmOps.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            pool.shutdown();
            if (!warm.isZero()) {
                err().printf("bench: warming up for %ss%n", warm.toMillis() / 1000.0);
                err().flush();
                Thread.sleep(warm.toMillis());
                latencies.reset();
            }
            RunCost cost = RunCost.start(session.connection().client(), session.connection().embedded());
            Histogram total = new Histogram(3);
            List<double[]> timeline = new ArrayList<>(); // {second, tps, p50Ms, p99Ms, p999Ms}
            Progress progress = new Progress(err(), runFor, transfers);
            long lastCount = 0;
            long lastTick = start;
            while (!pool.awaitTermination(1_000, TimeUnit.MILLISECONDS) || lastCount < committed.get() + canceled.get()) {
                long now = System.nanoTime();
                Histogram interval = latencies.getIntervalHistogram();
                total.add(interval);
                long count = committed.get() + canceled.get();
                double tps = (count - lastCount) / ((now - lastTick) / 1e9);
                timeline.add(new double[]{(now - start) / 1e9, tps, interval.getValueAtPercentile(50) / 1000.0,
                        interval.getValueAtPercentile(99) / 1000.0, interval.getValueAtPercentile(99.9) / 1000.0});
                progress.show((now - start) / 1e9, count, tps);
                lastCount = count;
                lastTick = now;
                if (pool.isTerminated()) {
                    break;
                }
            }
            for (Future<?> worker : workers) {
                worker.get(); // surface a worker's failure
            }
            total.add(latencies.getIntervalHistogram());
            if (own != null && finish == Finish.background) {
                long waitStart = System.nanoTime();
                if (!own.awaitFinished(Duration.ofMinutes(2))) {
                    throw new IllegalStateException("committed transfers were still not done 2 minutes after the run");
                }
                err().printf("bench: waited %.1f ms for the background finisher to mark the last transfers done%n",
                        (System.nanoTime() - waitStart) / 1e6);
                err().flush();
            }
            RunCost.Spent spent = cost.end(); // the background finisher's work is the transfers' cost too
            double seconds = (System.nanoTime() - start) / 1e9;
            progress.done();
            // After the run, not before: a fresh JVM's first pings run slow code (0.3 ms where a
            // warm one takes 0.03), which would count as round trip what is the client's start.
            double rttMs = RoundTrip.medianMs(session.connection().client().getDatabase(session.database()));
            err().printf("bench: a round trip to the server takes %.3f ms (median of pings right after the run)%n", rttMs);
            err().flush();

            BigDecimal finalTotal = BigDecimal.ZERO;
            for (Document account : accountsColl.find().projection(new Document("balance", 1))) {
                finalTotal = finalTotal.add(Numbers.exact((Number) account.get("balance")));
            }
            long operations = committed.get() + canceled.get();
            long allOperations = operations + warmOps.get();
            double anomaly = allOperations == 0 ? 0 : finalTotal.subtract(BigDecimal.valueOf(initialTotal)).abs().doubleValue() / allOperations;
            double tps = operations / seconds;
            double p50 = total.getValueAtPercentile(50) / 1000.0;
            double p99 = total.getValueAtPercentile(99) / 1000.0;
            double p999 = total.getValueAtPercentile(99.9) / 1000.0;
            if (plot != null) {
                BenchPlot.draw(plot, BenchPlot.title(twoRound ? mode + " (two-round commit)" : mode.name(), threads, accounts,
                        session.connection().uri(), session.connection().embedded(), warm, finish), timeline);
            }
            if (json) {
                ObjectNode node = Json.object();
                node.put("mode", mode.name());
                node.put("threads", threads);
                node.put("committed", committed.get());
                node.put("canceled", canceled.get());
                node.put("seconds", round(seconds));
                node.put("tps", round(tps));
                node.put("p50Ms", round(p50));
                node.put("p99Ms", round(p99));
                node.put("anomaly", anomaly);
                node.put("rttMs", round(rttMs));
                node.put("p50RoundTrips", round(RoundTrip.in(p50, rttMs)));
                node.put("twoRound", twoRound);
                node.put("commitInsert", twoRound && !noCommitInsert);
                node.put("p999Ms", round(p999));
                spent.putPerOperation(node, operations);
                printJson(node);
            } else {
                say(String.format("%s: %d threads, %d accounts: %d committed, %d canceled in %.1fs = %.0f tps;"
                                + " latency p50 %.2f ms (%.1f round trips of %.3f ms), p99 %.2f ms; anomaly %s (total %s, expected %d)",
                        twoRound ? mode + " (two-round commit)" : mode, threads, accounts, committed.get(), canceled.get(), seconds, tps, p50, RoundTrip.in(p50, rttMs), rttMs,
                        p99, anomaly, finalTotal.toPlainString(), initialTotal));
                say(String.format("p99.9 %.2f ms; %s", p999, spent.describe(operations)));
            }
            return ExitCodes.OK;
        }
    }

    /** True if {@code mode} runs no manager of its own (the options of one do not apply). */
    private static boolean withoutManager(Mode mode) {
        return mode != Mode.library && mode != Mode.interactive;
    }

    private static String id(int n) {
        return "b" + n;
    }

    private static double round(double value) {
        return Math.round(value * 1000) / 1000.0;
    }

    private void createAccounts(MongoCollection<Document> coll) {
        MongoCollection<Document> bulk = coll.withWriteConcern(WriteConcern.MAJORITY).withReadConcern(ReadConcern.MAJORITY);
        List<Document> batch = new ArrayList<>();
        for (int i = 0; i < accounts; i++) {
            batch.add(new Document("_id", id(i)).append("balance", OPENING)
                    .append("pendingTransactions", new ArrayList<>()));
            if (batch.size() == 10_000 || i == accounts - 1) {
                bulk.insertMany(batch);
                batch.clear();
                if (accounts > 50_000) {
                    err().printf("created %d of %d accounts%n", i + 1, accounts);
                    err().flush();
                }
            }
        }
    }
}
