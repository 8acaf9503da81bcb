package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the packaged {@code mongo2pc.jar} as separate processes: a server, commands against it,
 * workers draining a queue together, and a worker killed with kill -9 whose work another finishes.
 */
class CliProcessIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern URI = Pattern.compile("mongodb://127\\.0\\.0\\.1:\\d+");
    private static final Path JAR = Path.of(System.getProperty("mongo2pc.jar", "target/mongo2pc.jar")).toAbsolutePath();
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    @TempDir
    Path dir;

    private final List<Process> started = new ArrayList<>();
    private final List<MongoClient> clients = new ArrayList<>();
    private int logs;

    record Result(int exitCode, String out, String err) {
        JsonNode json() {
            try {
                return MAPPER.readTree(out);
            } catch (IOException e) {
                throw new AssertionError("stdout is not JSON: " + this, e);
            }
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\nstdout: " + out + "\nstderr: " + err;
        }
    }

    /** A running mongo2pc process whose output goes to files. */
    record Running(Process process, Path out, Path err) {
        String output() {
            return read(out) + read(err);
        }

        Result await(Duration timeout) throws InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("mongo2pc did not exit within " + timeout + ": " + output());
            }
            return new Result(process.exitValue(), read(out), read(err));
        }
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        clients.forEach(MongoClient::close);
        for (Process p : started) {
            if (p.isAlive()) {
                p.destroy();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private Running start(Path workDir, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(JAVA, "-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-jar", JAR.toString()));
        command.addAll(List.of(args));
        int n = ++logs;
        Path out = dir.resolve("p" + n + ".out");
        Path err = dir.resolve("p" + n + ".err");
        Process process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        started.add(process);
        return new Running(process, out, err);
    }

    private Result run(String... args) throws IOException, InterruptedException {
        return start(dir, args).await(Duration.ofSeconds(60));
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** Starts {@code serve} and returns its URI once it prints it. */
    private String serve(Running server) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = URI.matcher(read(server.out()));
            if (m.find()) {
                return m.group();
            }
            if (!server.process().isAlive()) {
                throw new AssertionError("serve exited: " + server.output());
            }
            Thread.sleep(50);
        }
        throw new AssertionError("serve printed no URI within 30s: " + server.output());
    }

    private String serveInMemory() throws IOException, InterruptedException {
        return serve(start(dir, "serve", "--port", "0", "--in-memory"));
    }

    private MongoClient client(String uri) {
        MongoClient client = MongoClients.create(uri);
        clients.add(client);
        return client;
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
    void demo_inACleanDirectory_onTheEmbeddedServer_thenVerifyIsOk() throws Exception {
        Result demo = start(dir, "demo", "--transfers", "50").await(Duration.ofSeconds(60));

        assertThat(demo.exitCode()).as(demo.toString()).isZero();
        assertThat(demo.out()).contains("embedded server on ./mongo2pc-data", "CRASH at", "recovery: 3 rolled forward, 1 canceled",
                "Demo finished: the books balance");
        assertThat(dir.resolve("mongo2pc-data")).isDirectory();
        Result verify = run("verify", "--expect-total", "5000", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        assertThat(verify.json().get("ok").asBoolean()).isTrue();
        assertThat(verify.json().get("accounts").asInt()).isEqualTo(5);
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

        Running rescuer = start(dir, "--uri", uri, "--db", "kill", "--app", "rescuer", "--lease", "2s", "worker",
                "--drain", "--threads", "2", "--scan-period", "200ms");
        Result rescued = rescuer.await(Duration.ofSeconds(90));

        assertThat(rescued.exitCode()).as(rescued.toString()).isZero();
        assertThat(rescued.out()).contains("recovered stale transactions");
        Result verify = run("--uri", uri, "--db", "kill", "verify", "--expect-total", "10000", "--json");
        assertThat(verify.exitCode()).as(verify.toString()).isZero();
        ledger.assertEveryTransferFinishedOnceAndBalancesReplay(List.of("victim", "rescuer"));
    }

    private static void signal(String name, Process process) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -" + name).isZero();
    }

    /** Accounts and queued transfers written with the library; checks the end state by replaying the done transfers. */
    static final class Ledger {
        private final MongoCollection<Document> accounts;
        private final MongoCollection<Document> transactions;
        private final Bank bank;
        private final Map<String, Long> opening = new HashMap<>();
        private final List<Object> submitted = new ArrayList<>();

        Ledger(MongoClient client, String db, int accountCount, long balance) {
            TransactionManager manager = Bank.configure(TransactionManager.builder().target("default", client)
                    .database(db).application("it-submitter")).build();
            this.bank = new Bank(manager);
            this.accounts = client.getDatabase(db).getCollection("accounts");
            this.transactions = client.getDatabase(db).getCollection("transactions");
            for (int i = 0; i < accountCount; i++) {
                bank.createAccount("acct" + i, balance);
                opening.put("acct" + i, balance);
            }
        }

        void submit(int count, long seed) {
            Random random = new Random(seed);
            List<String> ids = new ArrayList<>(opening.keySet());
            for (int i = 0; i < count; i++) {
                int from = random.nextInt(ids.size());
                int to = (from + 1 + random.nextInt(ids.size() - 1)) % ids.size();
                submitted.add(bank.submit(ids.get(from), ids.get(to), 1L + random.nextInt(400)));
            }
        }

        long count(String state) {
            return transactions.countDocuments(new Document("state", state));
        }

        void assertEveryTransferFinishedOnceAndBalancesReplay(List<String> applications) {
            Map<String, Long> expected = new HashMap<>(opening);
            int done = 0;
            for (Document tx : transactions.find(new Document("_id", new Document("$in", submitted)))) {
                String state = tx.getString("state");
                assertThat(state).as("transaction %s", tx.toJson()).isIn("done", "canceled");
                assertThat(applications).as("claimed by %s", tx.toJson()).contains(tx.getString("application"));
                if (state.equals("done")) {
                    done++;
                    long value = ((Number) tx.get("value")).longValue();
                    expected.merge(tx.getString("source"), -value, Long::sum);
                    expected.merge(tx.getString("destination"), value, Long::sum);
                } else {
                    assertThat(tx.getString("reason")).as("a canceled transfer says why").isNotBlank();
                }
            }
            assertThat(transactions.countDocuments(new Document("_id", new Document("$in", submitted))))
                    .isEqualTo(submitted.size());
            assertThat(done).isPositive();
            Map<String, Long> actual = new HashMap<>();
            for (Document account : accounts.find()) {
                actual.put(account.getString("_id"), ((Number) account.get("balance")).longValue());
                assertThat(account.getList("pendingTransactions", Object.class)).isEmpty();
            }
            assertThat(actual).as("balances equal a replay of the done transfers").isEqualTo(expected);
        }
    }
}
