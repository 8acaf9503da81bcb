package io.mongo2pc.cli;

import com.mongodb.MongoException;
import io.mongo2pc.cli.ProcessHarness.Ledger;
import io.mongo2pc.cli.ProcessHarness.Result;
import io.mongo2pc.cli.ProcessHarness.Running;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bank under chaos, Jepsen-style, all in separate processes: transfers queued as the tutorial
 * writes them, worked by three worker processes with different application names and a 2s
 * lease, while in every cycle one worker is killed with kill -9 (and restarted), one is frozen
 * with SIGSTOP past its lease and then resumed, and the durable {@code serve --data} is killed
 * with kill -9 and restarted on its data. At the end every transfer is done or canceled,
 * balances equal an exactly-once replay of the done ones, no balance is negative, no marker is
 * left, and the total is unchanged (closed-economy anomaly 0). Two of the three workers finish
 * committed transactions in the background ({@code --finish background}).
 *
 * <p>Runs about a minute by default; {@code -Dchaos.seconds=600} runs it longer.
 */
class ChaosIT {
    private static final int ACCOUNTS = 10;
    private static final long OPENING = 1_000;
    private static final Duration CYCLE = Duration.ofSeconds(16);

    @TempDir
    Path dir;

    private ProcessHarness harness;

    @AfterEach
    void stop() throws InterruptedException {
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    void bankUnderChaos_killedAndPausedWorkers_killedServer_everyTransferExactlyOnce() throws Exception {
        harness = new ProcessHarness(dir);
        int port = freePort();
        Path data = dir.resolve("data");
        String uri = "mongodb://127.0.0.1:" + port;
        Running server = startServer(port, data);
        Ledger ledger = new Ledger(harness.client(uri), "chaos", ACCOUNTS, OPENING);

        List<Running> workers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            workers.add(startWorker(uri, w));
        }
        long seconds = Long.getLong("chaos.seconds", 45);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        int cycle = 0;
        long lastFault = System.nanoTime();
        List<String> events = new ArrayList<>();
        while (System.nanoTime() < end) {
            submit(ledger, 80, 3 * cycle);
            Thread.sleep(1_000);

            // A worker dies with kill -9, in the middle of whatever it was doing; a new one takes its place.
            int victim = cycle % 3;
            workers.get(victim).process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            events.add("cycle " + cycle + ": kill -9 worker w" + victim);
            Thread.sleep(1_000);
            workers.set(victim, startWorker(uri, victim));

            // Another freezes (GC, SIGSTOP) in the middle of a transaction, for twice its lease, then
            // resumes with its next write in hand, after the others took that transaction over.
            int f = (cycle + 1) % 3;
            submit(ledger, 80, 3 * cycle + 1);
            Running frozen = workers.get(f);
            boolean caught = freezeMidTransaction(frozen, ledger, "w" + f);
            events.add("cycle " + cycle + ": SIGSTOP worker w" + f + (caught ? " holding a transaction" : "") + " for 4s");
            Thread.sleep(4_000);
            ProcessHarness.signal("CONT", frozen.process());

            // The database dies with kill -9 and comes back on its data.
            submit(ledger, 80, 3 * cycle + 2);
            Thread.sleep(500);
            server.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            events.add("cycle " + cycle + ": kill -9 serve --data");
            Thread.sleep(1_500);
            server = startServer(port, data);
            lastFault = System.nanoTime();
            cycle++;
            if (System.nanoTime() >= end) {
                break;
            }
            Thread.sleep(Math.max(0, CYCLE.toMillis() - 8_000));
        }

        // Quiet: no more faults. Every transaction must be terminal within 2 x (lease + scan period)
        // of the last fault, plus the time the workers need to run the transfers still queued.
        long quiet = lastFault;
        long openAtQuiet = ledger.submitted() - finished(ledger);
        long deadline = quiet + TimeUnit.SECONDS.toNanos(120);
        while (finished(ledger) < ledger.submitted() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        double settleSeconds = (System.nanoTime() - quiet) / 1e9;
        System.out.printf("chaos: %d transfers open just after the last fault, all terminal %.2fs after it (2 x (lease + scan) = 4.4s)%n",
                openAtQuiet, settleSeconds);
        for (Running worker : workers) {
            assertThat(worker.process().isAlive()).as("a worker survived the chaos: " + worker.output()).isTrue();
            ProcessHarness.signal("TERM", worker.process());
            Result stopped = worker.await(Duration.ofSeconds(30));
            assertThat(stopped.exitCode()).as("worker exit: " + stopped).isZero();
        }
        assertThat(finished(ledger)).as("every transfer finished after " + events).isEqualTo(ledger.submitted());
        ledger.assertEveryTransferFinishedOnceAndBalancesReplay(List.of("w0", "w1", "w2"));
        Result verify = harness.run("--uri", uri, "--db", "chaos", "verify", "--expect-total", String.valueOf(ACCOUNTS * OPENING), "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        assertThat(verify.json().get("negative").asInt()).isZero();
        assertThat(verify.json().get("markers").asInt()).isZero();
        System.out.println("chaos: " + cycle + " cycles, " + ledger.submitted() + " transfers, events " + events);
    }

    /** SIGSTOPs {@code worker}, retrying until it is caught owning an open transaction (or gives up after a while). */
    private static boolean freezeMidTransaction(Running worker, Ledger ledger, String application) throws Exception {
        for (int attempt = 0; attempt < 300; attempt++) {
            ProcessHarness.signal("STOP", worker.process());
            if (ledger.openOwnedBy(application) > 0) {
                return true;
            }
            ProcessHarness.signal("CONT", worker.process());
            Thread.sleep(3);
        }
        ProcessHarness.signal("STOP", worker.process());
        return false;
    }

    private Running startServer(int port, Path data) throws IOException, InterruptedException {
        Running server = harness.start(dir, "serve", "--port", String.valueOf(port), "--data", data.toString());
        harness.serve(server);
        return server;
    }

    /** Workers w1 and w2 finish in the background: their kills and freezes also hit committed transactions not yet done. */
    private Running startWorker(String uri, int n) throws IOException {
        return harness.start(dir, "--uri", uri, "--db", "chaos", "--app", "w" + n, "--lease", "2s",
                "worker", "--threads", "2", "--scan-period", "200ms", "--finish", n == 0 ? "inline" : "background");
    }

    /** Submits, riding out a server that is restarting. */
    private static void submit(Ledger ledger, int count, int seed) throws InterruptedException {
        for (int attempt = 0; attempt < 20; attempt++) {
            try {
                ledger.submitAsTutorial(count, seed);
                return;
            } catch (MongoException e) {
                Thread.sleep(500);
            }
        }
        throw new AssertionError("could not submit transfers");
    }

    private static long finished(Ledger ledger) {
        try {
            return ledger.finished();
        } catch (MongoException e) {
            return -1;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
