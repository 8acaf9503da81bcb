package io.mongo2pc.cli;

import io.mongo2pc.testing.TestManagers;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import org.bson.Document;

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
 * Runs the packaged {@code mongo2pc.jar} as separate processes for the process tests: starts them
 * with their output in files, finds the URI a {@code serve} prints, sends signals, and stops
 * whatever is left at the end. One per test.
 */
final class ProcessHarness implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern URI = Pattern.compile("mongodb://127\\.0\\.0\\.1:\\d+");
    private static final Path JAR = Path.of(System.getProperty("mongo2pc.jar", "target/mongo2pc.jar")).toAbsolutePath();
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private final Path dir;

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

    ProcessHarness(Path dir) {
        this.dir = dir;
    }

    @Override
    public void close() throws InterruptedException {
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

    Running start(Path workDir, String... args) throws IOException {
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

    Result run(String... args) throws IOException, InterruptedException {
        return start(dir, args).await(Duration.ofSeconds(60));
    }

    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** Starts {@code serve} and returns its URI once it prints it. */
    String serve(Running server) throws InterruptedException {
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

    String serveInMemory() throws IOException, InterruptedException {
        return serve(start(dir, "serve", "--port", "0", "--in-memory"));
    }

    MongoClient client(String uri) {
        MongoClient client = MongoClients.create(uri);
        clients.add(client);
        return client;
    }

    static void signal(String name, Process process) throws IOException, InterruptedException {
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
            TransactionManager manager = Bank.configure(TestManagers.builder(client, db, "it-submitter")).build();
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

        /** Queues transfers exactly as the tutorial writes them by hand: {source, destination, value, state: "initial", lastModified}. */
        void submitAsTutorial(int count, long seed) {
            Random random = new Random(seed);
            List<String> ids = new ArrayList<>(opening.keySet());
            for (int i = 0; i < count; i++) {
                int from = random.nextInt(ids.size());
                int to = (from + 1 + random.nextInt(ids.size() - 1)) % ids.size();
                Object id = new org.bson.types.ObjectId();
                transactions.insertOne(new Document("_id", id).append("source", ids.get(from)).append("destination", ids.get(to))
                        .append("value", 1L + random.nextInt(400)).append("state", "initial").append("lastModified", new java.util.Date()));
                submitted.add(id);
            }
        }

        /** How many of the submitted transfers are done or canceled. */
        long finished() {
            return transactions.countDocuments(new Document("_id", new Document("$in", submitted))
                    .append("state", new Document("$in", List.of("done", "canceled"))));
        }

        /** Open transactions (pending, applied, canceling) claimed by {@code application}. */
        long openOwnedBy(String application) {
            return transactions.countDocuments(new Document("application", application)
                    .append("state", new Document("$in", List.of("pending", "applied", "canceling"))));
        }

        int submitted() {
            return submitted.size();
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
