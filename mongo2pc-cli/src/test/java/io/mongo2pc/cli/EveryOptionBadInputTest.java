package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every command and every option of the command line, read from picocli's own model so that a new
 * option cannot be forgotten, fed bad values of its kind (numbers, durations, URIs, names, files),
 * an unknown option, a missing and an extra argument, and an unreachable server: each answer is a
 * refusal in the user's words ({@link JavaLeaks}), and nothing is written. Every {@code --help}
 * is read the same way.
 */
@Tag("slow")
class EveryOptionBadInputTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** A server nobody listens on, given up on quickly. */
    static final String UNREACHABLE = "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300";
    static final List<String> NUMBERS = List.of("abc", "1.5", "99999999999999999999", "");
    static final List<String> DURATIONS = List.of("abc", "5 minutes", "-1s", "1x", "99999999999999d");
    static final List<String> TARGETS = List.of("nonsense", "=x", "x=not a uri", "x=mongodb://", "default=" + UNREACHABLE);

    @TempDir
    Path dir;
    Map<String, List<String>> base;
    Map<String, List<String>> badValues;
    int benchDatabases;

    @BeforeEach
    void setUp() throws IOException {
        CliRunner cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "1000").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), 2000L);
        Path tx = dir.resolve("tx.json");
        Files.writeString(tx, "{\"ops\": [{\"op\": \"insert\", \"db\": \"d\", \"coll\": \"c\", \"doc\": {\"_id\": 1}}]}");
        Path shortToken = dir.resolve("short-token");
        Files.writeString(shortToken, "abc");

        // Arguments that make each command valid, so that the one bad value is what it refuses.
        base = new LinkedHashMap<>();
        base.put("serve", List.of("--port", "0", "--in-memory"));
        base.put("accounts create", List.of("N1", "5"));
        base.put("transfer", List.of("A", "B", "5"));
        base.put("submit", List.of("A", "B", "5"));
        base.put("worker", List.of("--drain"));
        base.put("inspect", List.of("nope"));
        base.put("cancel", List.of("nope"));
        base.put("prune", List.of("--older-than", "3650d"));
        base.put("tx", List.of(tx.toString()));
        base.put("read", List.of(mongo.database(), "accounts", "A"));
        base.put("bench", List.of("--transfers", "10", "--accounts", "2", "--threads", "1"));
        base.put("console", List.of("--port", "0"));

        // Bad values beyond those of the option's type (numbers, durations), by "command option";
        // an empty list says the option has none (any text is a fine value).
        badValues = new LinkedHashMap<>();
        badValues.put("--uri", List.of("not a uri", "mongodb://", "mongodb://a:b:c/", "mongodb://h/?w=banana"));
        badValues.put("--db", List.of("a/b", "", "a.b", "x".repeat(70), "a$b"));
        badValues.put("--app", List.of(""));
        badValues.put("--lease", List.of("0"));
        badValues.put("--target", TARGETS);
        badValues.put("serve --port", List.of("70000", "-1"));
        badValues.put("serve --latency", List.of("10s"));
        badValues.put("serve --worker-threads", List.of("0", "2000"));
        badValues.put("serve --data", List.of("/dev/null/x", tx.toString()));
        badValues.put("worker --threads", List.of("0", "-1"));
        badValues.put("worker --scan-period", List.of("0"));
        badValues.put("worker --finish", List.of("later"));
        badValues.put("recover --target", TARGETS);
        badValues.put("cancel --reason", List.of());
        for (String command : List.of("transfer", "submit", "tx")) {
            badValues.put(command + " --id", List.of("", "  "));
        }
        badValues.put("verify --expect-total", List.of("abc", "1.2.3", "", "-", "1e3"));
        badValues.put("demo --transfers", List.of("-1", "10001"));
        badValues.put("demo --workers", List.of("0", "17"));
        badValues.put("tx --target", TARGETS);
        badValues.put("read --target", List.of("nope", "x=not a uri", "=x"));
        badValues.put("bench --accounts", List.of("1", "0"));
        badValues.put("bench --threads", List.of("0", "5000"));
        badValues.put("bench --transfers", List.of("0", "-1"));
        badValues.put("bench --mode", List.of("fast"));
        badValues.put("bench --finish", List.of("later"));
        badValues.put("bench --combined-requests", List.of("0", "-1"));
        badValues.put("bench --rules", List.of("3", "0"));
        badValues.put("bench --duration", List.of("0"));
        badValues.put("bench --seed", List.of());
        badValues.put("bench --plot", List.of("/nonexistent/folder/p.png", dir.toString()));
        badValues.put("transactions list --state", List.of("bogus", ""));
        badValues.put("transactions list --owner", List.of());
        badValues.put("transactions list --limit", List.of("0", "5000"));
        badValues.put("transactions list --after", List.of("garbage", "{\"$gt\": 1}"));
        badValues.put("transactions list --from", List.of("soon", "2024-13-01T00:00:00Z", "-1h", ""));
        badValues.put("transactions list --to", List.of("later", "yesterday", ""));
        badValues.put("transactions list --touching", List.of("", "  "));
        badValues.put("console --port", List.of("70000", "-1"));
        badValues.put("console --bind", List.of("no-such-host.invalid", "8.8.8.8"));
        badValues.put("console --token-file", List.of(dir.resolve("none").toString(), dir.toString(), shortToken.toString()));
        badValues.put("console --target", TARGETS);
        badValues.put("console --refresh", List.of("10ms", "5s"));
        // positionals, by "command LABEL"
        badValues.put("accounts create ID", List.of(""));
        badValues.put("accounts create BALANCE", List.of("abc", "-5", "1e3", "", "99999999999999999999", "1.2.3",
                "0." + "0".repeat(6200) + "1"));
        for (String command : List.of("transfer", "submit")) {
            badValues.put(command + " SRC", List.of("", "Z"));
            badValues.put(command + " DST", List.of("", "Z", "A"));
            badValues.put(command + " AMOUNT", List.of("0", "-5", "abc", "1e3", "1.505", "99999999999999999999", ""));
        }
        for (String command : List.of("inspect", "cancel")) {
            badValues.put(command + " TXID", List.of("", "nope", "{\"$gt\": \"\"}", "000000000000000000000000"));
        }
        badValues.put("tx FILE|-", List.of(dir.resolve("missing.json").toString(), dir.toString(), ""));
        badValues.put("read DB", List.of("a.b", "", "a/b"));
        badValues.put("read COLL", List.of("", "nope$"));
        badValues.put("read ID", List.of("nope", ""));
        badValues.put("help COMMAND", List.of("frobnicate"));
    }

    /** One command line and what its answer may be. */
    private record Case(List<String> args, boolean unreachable, boolean json) {
        Case(List<String> args, boolean unreachable) {
            this(args, unreachable, true);
        }
    }

    @Test
    void everyOptionAndArgument_badValue_isRefusedInTheUsersWords_andChangesNothing() throws Exception {
        List<Case> cases = new ArrayList<>();
        CommandLine root = Main.commandLine();
        for (OptionSpec option : root.getCommandSpec().options()) {
            if (!option.usageHelp() && !option.versionHelp()) {
                for (String value : valuesFor("", option)) {
                    cases.add(new Case(List.of(option.longestName(), value, "status"), false));
                }
            }
        }
        for (CommandLine command : leaves(root)) {
            String name = name(command);
            List<String> valid = base.getOrDefault(name, List.of());
            boolean json = command.getCommandSpec().findOption("--json") != null;
            int first = cases.size();
            for (OptionSpec option : command.getCommandSpec().options()) {
                if (option.inherited() || option.usageHelp() || option.versionHelp() || option.arity().max() == 0) {
                    continue;
                }
                for (String value : valuesFor(name + " ", option)) {
                    List<String> args = new ArrayList<>(words(name));
                    args.addAll(option.longestName().equals("--data") ? List.of("--port", "0") : valid);
                    args.add(option.longestName());
                    args.add(value);
                    cases.add(new Case(args, false));
                }
            }
            List<PositionalParamSpec> positionals = command.getCommandSpec().positionalParameters();
            for (PositionalParamSpec positional : positionals) {
                for (String value : valuesFor(name + " ", positional)) {
                    List<String> args = new ArrayList<>(words(name));
                    List<String> values = new ArrayList<>(valid);
                    int index = positional.index().min();
                    if (index < values.size()) {
                        values.set(index, value);
                    } else {
                        values.add(value);
                    }
                    args.addAll(values);
                    cases.add(new Case(args, false));
                }
            }
            if (!name.equals("help")) { // picocli's help shows the help whatever follows
                cases.add(new Case(concat(words(name), valid, List.of("--frobnicate")), false));
                cases.add(new Case(concat(words(name), valid, List.of("extra", "words", "here")), false));
            }
            if (positionals.stream().anyMatch(p -> p.arity().min() > 0)) {
                cases.add(new Case(words(name), false));
            }
            if (!name.equals("help")) {
                cases.add(new Case(concat(List.of("--uri", UNREACHABLE), words(name), valid), true));
            }
            for (int i = first; i < cases.size(); i++) {
                cases.set(i, new Case(cases.get(i).args(), cases.get(i).unreachable(), json));
            }
        }

        List<String> problems = new ArrayList<>();
        for (Case c : cases) {
            check(c, problems);
        }

        assertThat(cases).hasSizeGreaterThan(250);
        assertThat(problems).as("answers to bad input that are not a refusal in the user's words").isEmpty();
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isZero();
    }

    @Test
    void everyHelp_speaksTheUsersWords() {
        List<String> problems = new ArrayList<>();
        CommandLine root = Main.commandLine();
        List<List<String>> helps = new ArrayList<>(List.of(List.of("--help")));
        for (CommandLine command : leaves(root)) {
            helps.add(concat(words(name(command)), List.of("--help")));
        }
        for (CommandLine command : root.getSubcommands().values()) {
            helps.add(List.of("help", command.getCommandName()));
        }
        for (List<String> args : helps) {
            CliRunner.Result r = new CliRunner().run(args.toArray(String[]::new));
            if (r.exitCode() != 0 || r.out().isBlank()) {
                problems.add(String.join(" ", args) + " -> " + r);
            }
            JavaLeaks.find(r.out() + r.err()).ifPresent(leak -> problems.add(String.join(" ", args) + " -> '" + leak + "'"));
        }
        assertThat(problems).isEmpty();
    }

    private void check(Case c, List<String> problems) throws Exception {
        List<String> globals = new ArrayList<>(List.of("--db", mongo.database()));
        if (c.args().contains("bench")) {
            globals.set(1, "bench" + benchDatabases++); // bench refuses a database that holds accounts
        }
        if (!c.unreachable()) {
            globals.addAll(List.of("--uri", mongo.uri()));
        }
        for (boolean withJson : c.json() ? new boolean[] {false, true} : new boolean[] {false}) {
            List<String> args = new ArrayList<>(c.args());
            if (withJson) {
                args.add("--json");
            }
            String line = String.join(" ", args);
            CliRunner.Result r = runWithin(Duration.ofSeconds(60), new CliRunner(globals.toArray(String[]::new)), args);
            if (r == null) {
                problems.add(line + "\n  -> still running after 60s: the bad value was taken");
                continue;
            }
            String said = r.err() + (withJson ? r.out() : "");
            JavaLeaks.find(said).ifPresent(leak -> problems.add(line + "\n  -> '" + leak + "' in: " + said.strip()));
            if (said.contains("unexpected error") || said.contains("internal error")) {
                problems.add(line + "\n  -> not an answer to bad input: " + said.strip());
            }
            if (c.args().stream().anyMatch(a -> a.equals("--target")) && said.contains("invalid --uri")) {
                problems.add(line + "\n  -> a bad --target is not a bad --uri: " + said.strip());
            }
            if (r.exitCode() == 0) {
                problems.add(line + "\n  -> exit 0: the bad value was taken: " + said.strip());
            } else if (c.unreachable() && !c.args().contains("serve") && r.exitCode() != ExitCodes.NOT_OK) {
                problems.add(line + "\n  -> exit " + r.exitCode() + " for an unreachable server, not 1: " + said.strip());
            }
            if (r.err().isBlank()) {
                problems.add(line + "\n  -> nothing on stderr");
            }
            if (withJson && !r.out().isBlank() && !r.out().strip().startsWith("{")) {
                problems.add(line + "\n  -> --json printed something else than one object: " + r.out());
            }
        }
    }

    /** Runs one command line in a thread; null if it is still running after {@code limit} (it was left running). */
    private static CliRunner.Result runWithin(Duration limit, CliRunner cli, List<String> args) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "bad-input-case");
            t.setDaemon(true);
            return t;
        });
        try {
            Future<CliRunner.Result> result = thread.submit(() -> cli.run(args.toArray(String[]::new)));
            return result.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } finally {
            thread.shutdownNow();
        }
    }

    /** The bad values of {@code arg} of the command {@code prefix}: its own table's, and its type's. */
    private List<String> valuesFor(String prefix, ArgSpec arg) {
        String key = prefix + (arg instanceof OptionSpec o ? o.longestName() : arg.paramLabel());
        List<String> values = new ArrayList<>(badValues.getOrDefault(key, List.of()));
        Class<?> type = arg.type();
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            values.addAll(NUMBERS);
        } else if (type == Duration.class) {
            values.addAll(DURATIONS);
        } else if (type.isEnum()) {
            values.add("nope");
        } else if (!badValues.containsKey(key) && type != boolean.class) {
            throw new AssertionError("no bad values for " + key + " (" + type.getSimpleName()
                    + "): add them to this test's table, or an empty list if any text is fine");
        }
        return values;
    }

    /** Every command that runs something: the subcommands without subcommands of their own. */
    private static List<CommandLine> leaves(CommandLine root) {
        List<CommandLine> leaves = new ArrayList<>();
        for (CommandLine sub : root.getSubcommands().values()) {
            if (sub.getSubcommands().isEmpty()) {
                leaves.add(sub);
            } else {
                leaves.addAll(leaves(sub));
            }
        }
        return leaves;
    }

    private static String name(CommandLine command) {
        return command.getCommandSpec().qualifiedName(" ").replaceFirst("^mongo2pc ", "");
    }

    private static List<String> words(String name) {
        return List.of(name.split(" "));
    }

    @SafeVarargs
    private static List<String> concat(List<String>... parts) {
        List<String> all = new ArrayList<>();
        for (List<String> part : parts) {
            all.addAll(part);
        }
        return all;
    }
}
