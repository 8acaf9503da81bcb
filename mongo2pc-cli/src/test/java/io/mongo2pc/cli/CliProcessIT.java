package io.mongo2pc.cli;

import com.mongodb.client.MongoClient;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.mongo2pc.cli.ProcessHarness.Ledger;
import io.mongo2pc.sweeps.Orphans;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.cli.ProcessHarness.Result;
import io.mongo2pc.cli.ProcessHarness.Running;

import static io.mongo2pc.cli.ProcessHarness.read;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the packaged {@code mongo2pc.jar} as separate processes: a server, commands against it,
 * workers draining a queue together, and a worker killed with kill -9 whose work another finishes.
 */
class CliProcessIT {
    @TempDir
    Path dir;

    private ProcessHarness harness;

    @BeforeEach
    void startHarness() {
        harness = new ProcessHarness(dir);
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        harness.close();
    }

    private Running start(Path workDir, String... args) throws IOException {
        return harness.start(workDir, args);
    }

    private Result run(String... args) throws IOException, InterruptedException {
        return harness.run(args);
    }

    private String serve(Running server) throws InterruptedException {
        return harness.serve(server);
    }

    private String serveInMemory() throws IOException, InterruptedException {
        return harness.serveInMemory();
    }

    private MongoClient client(String uri) {
        return harness.client(uri);
    }

    private static void signal(String name, Process process) throws IOException, InterruptedException {
        ProcessHarness.signal(name, process);
    }

    @Test
    void serve_commandsWithUri_discoveryByServerUri_andCleanStopOnSigterm() throws Exception {
        Path data = dir.resolve("mongo2pc-data");
        Running server = start(dir, "serve", "--port", "0", "--data", data.toString());
        String uri = serve(server);
        assertThat(read(data.resolve("server.uri")).trim()).isEqualTo(uri);
        Result second = run("serve", "--port", "0", "--data", data.toString());
        assertThat(second.exitCode()).as("a second server on the same data: " + second).isEqualTo(1);
        assertThat(second.err()).contains("in use");

        assertThat(run("--uri", uri, "accounts", "create", "A", "100").exitCode()).isZero();
        assertThat(run("--uri", uri, "accounts", "create", "B", "0").exitCode()).isZero();
        Result done = run("--uri", uri, "transfer", "A", "B", "40", "--json");
        assertThat(done.exitCode()).as(done.toString()).isZero();
        assertThat(done.json().get("state").asText()).isEqualTo("done");
        Result canceled = run("--uri", uri, "transfer", "A", "B", "100", "--json");
        assertThat(canceled.exitCode()).as(canceled.toString()).isEqualTo(3);
        assertThat(canceled.json().get("state").asText()).isEqualTo("canceled");

        // Without --uri, in the folder whose ./mongo2pc-data the server runs on: the command uses that server.
        Result list = run("accounts", "list", "--json");
        assertThat(list.exitCode()).as(list.toString()).isZero();
        assertThat(list.json().get("total").asLong()).isEqualTo(100);
        assertThat(list.json().get("accounts").get(0).get("balance").asLong()).isEqualTo(60);

        server.process().destroy(); // SIGTERM
        Result stopped = server.await(Duration.ofSeconds(20));
        assertThat(stopped.exitCode()).as(stopped.toString()).isZero();
        assertThat(data.resolve("server.uri")).doesNotExist();

        // The data survived the server: a command opens the folder itself now.
        Result verify = run("verify", "--expect-total", "100", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        assertThat(verify.json().get("ok").asBoolean()).isTrue();
        assertThat(verify.json().get("accounts").asInt()).isEqualTo(2);
    }

    @Test
    void worker_withoutServe_servesItsDataFolder_soSubmitAndStatusThereWork() throws Exception {
        // given: a worker on the embedded server, no `serve`
        Running worker = start(dir, "worker");
        Path uriFile = dir.resolve("mongo2pc-data").resolve(Connection.URI_FILE);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!java.nio.file.Files.exists(uriFile)) {
            assertThat(worker.process().isAlive()).as(worker.output()).isTrue();
            assertThat(System.nanoTime() - deadline).as("worker serves its folder within 60s").isNegative();
            Thread.sleep(50);
        }

        // when: other commands in the same folder
        assertThat(run("accounts", "create", "A", "100").exitCode()).isZero();
        assertThat(run("accounts", "create", "B", "0").exitCode()).isZero();
        Result submitted = run("submit", "A", "B", "10", "--json");
        Result status = run("status", "--json");

        // then: they joined the worker's server, and the worker ran the queued transfer
        assertThat(submitted.exitCode()).as(submitted.toString()).isZero();
        assertThat(status.exitCode()).as(status.toString()).isZero();
        Result verify;
        do {
            assertThat(System.nanoTime() - deadline).as("the worker runs the transfer").isNegative();
            Thread.sleep(100);
            verify = run("verify", "--expect-total", "100", "--json");
        } while (verify.exitCode() != 0);
        ProcessHarness.signal("TERM", worker.process());
        assertThat(worker.await(Duration.ofSeconds(30)).exitCode()).as(worker.output()).isZero();
        assertThat(uriFile).doesNotExist();
        assertThat(run("status").exitCode()).as("the folder is free again").isZero();
    }

    @Test
    void demo_inACleanDirectory_onTheEmbeddedServer_thenVerifyIsOk() throws Exception {
        Result demo = start(dir, "demo", "--transfers", "50").await(Duration.ofSeconds(60));

        assertThat(demo.exitCode()).as(demo.toString()).isZero();
        assertThat(demo.out()).contains("embedded server on ./mongo2pc-data", "CRASH at", "recovery: 3 rolled forward, 1 canceled",
                "pay demo1-order-1 (120) from demo1-alice: done", "Demo finished: the books balance");
        assertThat(dir.resolve("mongo2pc-data")).isDirectory();
        Result verify = run("--db", "mongo2pc_demo", "verify", "--expect-total", "5000", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        assertThat(verify.json().get("ok").asBoolean()).isTrue();
        assertThat(verify.json().get("accounts").asInt()).as("five people and the shop").isEqualTo(6);
    }

    @Test
    void twoWorkerProcesses_drainAQueueTogether_eachTransferDoneExactlyOnce() throws Exception {
        String uri = serveInMemory();
        Ledger ledger = new Ledger(client(uri), "drain", 10, 1000);
        ledger.submit(200, 42);

        Running w1 = start(dir, "--uri", uri, "--db", "drain", "--app", "w1", "worker", "--drain", "--threads", "2");
        Running w2 = start(dir, "--uri", uri, "--db", "drain", "--app", "w2", "worker", "--drain", "--threads", "2");
        Running w3 = start(dir, "--uri", uri, "--db", "drain", "--app", "w3", "worker");
        Result r1 = w1.await(Duration.ofSeconds(90));
        Result r2 = w2.await(Duration.ofSeconds(90));
        w3.process().destroy(); // SIGTERM: a worker without --drain stops cleanly
        Result r3 = w3.await(Duration.ofSeconds(20));

        assertThat(r1.exitCode()).as(r1.toString()).isZero();
        assertThat(r2.exitCode()).as(r2.toString()).isZero();
        assertThat(r3.exitCode()).as(r3.toString()).isZero();
        assertThat(r3.out()).contains("worker stopped");
        Result verify = run("--uri", uri, "--db", "drain", "verify", "--expect-total", "10000", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        ledger.assertEveryTransferFinishedOnceAndBalancesReplay(List.of("w1", "w2", "w3"));
    }

    @Test
    void workerKilledWithSigkill_anotherWorkerWithAShortLeaseFinishesEverything() throws Exception {
        String uri = serveInMemory();
        Ledger ledger = new Ledger(client(uri), "kill", 10, 1000);
        ledger.submit(300, 7);

        Running victim = start(dir, "--uri", uri, "--db", "kill", "--app", "victim", "worker", "--threads", "2");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (ledger.count("done") + ledger.count("canceled") < 40 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ledger.count("done")).as("the victim worker ran transfers: " + victim.output()).isPositive();
        // Freeze it (SIGSTOP) until it is caught in the middle of a transfer, then kill -9 it there.
        long leftOpen = 0;
        for (int attempt = 0; attempt < 200 && leftOpen == 0; attempt++) {
            signal("STOP", victim.process());
            leftOpen = ledger.count("pending") + ledger.count("applied") + ledger.count("canceling");
            if (leftOpen == 0) {
                signal("CONT", victim.process());
                Thread.sleep(5);
            }
        }
        victim.process().destroyForcibly();
        victim.process().waitFor(10, TimeUnit.SECONDS);
        assertThat(leftOpen).as("the victim was killed in the middle of a transfer").isPositive();
        // The victim is dead: its leases (30 s, the default) and the deadlines of its prepares without
        // a document are moved into the past rather than waited out; the rescuer judges them as it
        // would once that time had passed.
        EmbeddedMongo.expireLeases(client(uri), "kill");
        Orphans.expire(client(uri).getDatabase("kill"), Duration.ofSeconds(1));

        Running rescuer = start(dir, "--uri", uri, "--db", "kill", "--app", "rescuer", "--lease", "2s", "worker",
                "--drain", "--threads", "2", "--scan-period", "200ms");
        Result rescued = rescuer.await(Duration.ofSeconds(90));

        assertThat(rescued.exitCode()).as(rescued.toString()).isZero();
        assertThat(rescued.out()).contains("recovered stale transactions");
        Result verify = run("--uri", uri, "--db", "kill", "verify", "--expect-total", "10000", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        ledger.assertEveryTransferFinishedOnceAndBalancesReplay(List.of("victim", "rescuer"));
    }
}
