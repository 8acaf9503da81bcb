package io.mongo2pc.cli;

import io.mongo2pc.LeaseLostException;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code worker}: claims and runs queued transactions, and recovers stale ones, until stopped
 * (SIGTERM/SIGINT) or, with {@code --drain}, until no transaction is open at all.
 */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = {"Claims and runs queued ('initial') transactions, and takes over stale ones whose owner's lease expired.",
                "Runs until SIGTERM/SIGINT; with --drain, exits 0 once no transaction is open."})
final class WorkerCommand extends BaseCommand {
    private static final long IDLE_BACKOFF_MIN_MS = 5;
    private static final long IDLE_BACKOFF_MAX_MS = 200;
    private static final long ERROR_BACKOFF_MAX_MS = 5_000;
    private static final long DRAIN_CHECK_MS = 100;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "1", description = "worker threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--drain", description = "exit once no transaction is open (initial, pending, applied, canceling)")
    boolean drain;

    @Option(names = "--scan-period", paramLabel = "DURATION", defaultValue = "500ms", converter = DurationConverter.class,
            description = "one recovery pass per period, busy or idle (default: ${DEFAULT-VALUE})")
    Duration scanPeriod;

    @Option(names = "--finish", paramLabel = "HOW", description = {"inline (a claimed transaction is run to done) or background",
            "(it is run to its commit point; one thread releases markers and marks many done per request, and",
            "finishes what it holds before the worker exits) (default: ${DEFAULT-VALUE})"})
    Finish finish = Finish.inline;

    private final AtomicBoolean stop = new AtomicBoolean();
    /** What the last recovery pass had to leave because owners' leases run (null: nothing). */
    private volatile Waiting waiting;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong canceled = new AtomicLong();
    private final AtomicLong rolledForward = new AtomicLong();
    private final AtomicLong recoveredCanceled = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong nextScan = new AtomicLong();
    private final AtomicLong nextDrainCheck = new AtomicLong();
    private final AtomicBoolean drained = new AtomicBoolean();
    private final AtomicLong zeroCounts = new AtomicLong();
    private final AtomicLong lastOpen = new AtomicLong(-1);

    @Override
    protected int run() throws InterruptedException {
        if (threads < 1 || threads > 256) {
            throw CliException.badInput("--threads must be between 1 and 256, got " + threads);
        }
        if (scanPeriod.isZero()) {
            throw CliException.badInput("--scan-period must be positive");
        }
        try (Session session = openServing(globals().database());
             TransactionManager background = finish == Finish.background ? session.newBackgroundManager() : null) {
            TransactionManager manager = background == null ? session.manager() : background;
            say(stamp() + " worker " + manager.settings().owner() + ": " + threads + " thread(s) on "
                    + session.connection().description() + ", database " + session.database() + ", lease "
                    + DurationConverter.format(manager.settings().lease()) + "; "
                    + (drain ? "exits once no transaction is open" : "stop with Ctrl-C or SIGTERM"));
            Signals.onStop(() -> stop.set(true));
            long now = System.nanoTime();
            nextScan.set(now);
            nextDrainCheck.set(now);
            List<Thread> workers = new ArrayList<>();
            for (int i = 1; i <= threads; i++) {
                int n = i;
                Thread t = new Thread(() -> loop(manager, n), "mongo2pc-worker-" + i);
                t.start();
                workers.add(t);
            }
            String last = "";
            while (workers.stream().anyMatch(Thread::isAlive)) {
                workers.get(0).join(1000);
                String progress = progress();
                if (!progress.equals(last)) {
                    say(stamp() + " " + progress);
                    last = progress;
                }
            }
            say(stamp() + " worker " + (drained.get() ? "drained: no transaction is open" : "stopped") + "; " + progress());
        }
        return ExitCodes.OK;
    }

    private void loop(TransactionManager manager, int n) {
        long idleBackoff = IDLE_BACKOFF_MIN_MS;
        long errorBackoff = 100;
        while (!stop.get()) {
            try {
                // Recovery is due once per scan period even while the queue is busy: a stale
                // transaction holds money (its markers) until someone finishes it.
                boolean recovered = recoverIfDue(manager);
                Optional<TransactionOutcome> outcome = manager.claimAndRun();
                errorBackoff = 100;
                if (outcome.isPresent()) {
                    (outcome.get().isCommitted() ? done : canceled).incrementAndGet();
                    idleBackoff = IDLE_BACKOFF_MIN_MS;
                    continue;
                }
                if (recovered) {
                    idleBackoff = IDLE_BACKOFF_MIN_MS;
                    continue;
                }
                if (drain && drainedNow(manager)) {
                    drained.set(true);
                    stop.set(true);
                    break;
                }
                sleep(idleBackoff);
                idleBackoff = Math.min(IDLE_BACKOFF_MAX_MS, idleBackoff * 2);
            } catch (LeaseLostException e) {
                // Someone took the transaction over (we were too slow); it finishes it. Not an error.
                lost.incrementAndGet();
            } catch (RuntimeException e) {
                errors.incrementAndGet();
                err().println(stamp() + " worker thread " + n + ": " + Words.plain(Connection.firstLine(e.getMessage()))
                        + "; retrying in " + errorBackoff + "ms");
                err().flush();
                sleep(errorBackoff);
                errorBackoff = Math.min(ERROR_BACKOFF_MAX_MS, errorBackoff * 2);
            }
        }
    }

    /** One recovery pass if none ran in this process for a scan period; true if it finished something. */
    private boolean recoverIfDue(TransactionManager manager) {
        long now = System.nanoTime();
        long due = nextScan.get();
        if (now - due < 0 || !nextScan.compareAndSet(due, now + scanPeriod.toNanos())) {
            return false;
        }
        // Draining, the pass looks at every open transaction (Duration.ZERO): it still takes one over
        // only once its owner's own lease has run out, and it learns when each one's does.
        RecoveryReport report = drain ? manager.recover(Duration.ZERO) : manager.recover();
        waiting = Waiting.of(manager, report.notStale());
        rolledForward.addAndGet(report.rolledForward());
        recoveredCanceled.addAndGet(report.canceled());
        if (report.finished() > 0) {
            say(stamp() + " recovered stale transactions: " + report.rolledForward() + " rolled forward, "
                    + report.canceled() + " canceled, " + report.skipped() + " skipped");
        }
        return report.finished() > 0;
    }

    private boolean drainedNow(TransactionManager manager) {
        long now = System.nanoTime();
        long due = nextDrainCheck.get();
        if (now - due < 0 || !nextDrainCheck.compareAndSet(due, now + DRAIN_CHECK_MS * 1_000_000)) {
            return false;
        }
        Map<TransactionState, Long> counts = manager.counts();
        long open = 0;
        for (TransactionState state : TransactionState.open()) {
            open += counts.getOrDefault(state, 0L);
        }
        lastOpen.set(open);
        // The counts are separate queries: a transaction moving fast could slip between them, so
        // "nothing open" must be seen twice in a row before the worker leaves.
        if (open > 0) {
            zeroCounts.set(0);
            return false;
        }
        return zeroCounts.incrementAndGet() >= 2;
    }

    private String progress() {
        long open = lastOpen.get();
        return "done " + done.get() + ", canceled " + canceled.get() + ", recovered " + rolledForward.get()
                + " rolled forward + " + recoveredCanceled.get() + " canceled, lost to others " + lost.get()
                + ", errors " + errors.get() + (drain && open > 0 ? "; waiting for " + open + " open transaction(s)"
                + (waiting == null ? " (being run by other processes)" : ": " + waiting.describe()) : "");
    }

    private static String stamp() {
        return LocalTime.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }

    private void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.set(true);
        }
    }
}
