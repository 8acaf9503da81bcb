package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.cli.bench.BenchCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code mongo2pc} command line. Global options come before the command:
 * <pre>
 * mongo2pc [--uri URI] [--db NAME] [--app NAME] [--lease DURATION] [--retry-timeout DURATION] COMMAND ...
 * </pre>
 * Exit codes: 0 ok; 1 not ok or an unexpected error; 2 bad input; 3 canceled / cannot cancel; 4 not found
 * ({@code inspect}, {@code read}, {@code cancel}).
 */
@Command(name = "mongo2pc", mixinStandardHelpOptions = true, version = "mongo2pc 0.1.0",
        description = "Multi-document transactions on MongoDB with the two-phase-commit protocol of MongoDB's "
                + "tutorial \"Perform Two Phase Commits\".",
        footer = {"",
                "Without --uri, commands use the embedded server with its data in",
                "./mongo2pc-data (or the `serve`, `worker` or `demo` running there); only",
                "serve, accounts create, tx, worker, demo and bench start new data there.",
                "Every command says first (on stderr) which server and data folder it uses.",
                "The options above may also follow the command.",
                "Exit codes: 0 ok; 1 not ok or unexpected error; 2 bad input;",
                "3 canceled or cannot cancel; 4 not found (inspect, read, cancel).",
                "`mongo2pc help COMMAND` shows a command's options and exit codes."},
        subcommands = {
                ServeCommand.class,
                AccountsCommand.class,
                TransferCommand.class,
                SubmitCommand.class,
                WorkerCommand.class,
                RecoverCommand.class,
                StatusCommand.class,
                VerifyCommand.class,
                InspectCommand.class,
                CancelCommand.class,
                PruneCommand.class,
                DemoCommand.class,
                TxCommand.class,
                ReadCommand.class,
                BenchCommand.class,
                TransactionsCommand.class,
                ConsoleCommand.class,
                CommandLine.HelpCommand.class,
        })
public final class Main implements Runnable {

    @Spec
    CommandSpec spec;

    @Option(names = "--uri", paramLabel = "URI", scope = ScopeType.INHERIT,
            description = "MongoDB connection string (default: the embedded server on ./mongo2pc-data)")
    String uri;

    @Option(names = "--db", paramLabel = "NAME", defaultValue = "mongo2pc", scope = ScopeType.INHERIT,
            description = "database of the accounts and transactions collections (default: ${DEFAULT-VALUE})")
    String database;

    @Option(names = "--app", paramLabel = "NAME", defaultValue = "mongo2pc", scope = ScopeType.INHERIT,
            description = "application name stored in claimed transactions (default: ${DEFAULT-VALUE})")
    String application;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "30s", scope = ScopeType.INHERIT,
            converter = DurationConverter.class,
            description = "how long an owner may stay silent before others take its transactions over (default: ${DEFAULT-VALUE})")
    Duration lease;

    @Option(names = "--retry-timeout", paramLabel = "DURATION", defaultValue = "30s", scope = ScopeType.INHERIT,
            converter = DurationConverter.class,
            description = "how long a step is retried through database errors before the command gives up (default: ${DEFAULT-VALUE})")
    Duration retryTimeout;

    @Option(names = "--target", paramLabel = "NAME=URI",
            description = "another MongoDB that operations with \"target\": NAME reach (tx, recover, read); repeatable")
    Map<String, String> targets = new LinkedHashMap<>();

    /**
     * One line per command for the command list, whole sentences that fit one line (a command's
     * own help gives the details).
     */
    private static final Map<String, String> SUMMARIES = Map.ofEntries(
            Map.entry("serve", "Runs the embedded MongoDB-compatible server until stopped."),
            Map.entry("accounts", "Creates and lists the tutorial's accounts."),
            Map.entry("transfer", "Moves an amount between two accounts in one transaction."),
            Map.entry("submit", "Queues a transfer for a worker and prints its id."),
            Map.entry("worker", "Runs queued transactions and finishes stale ones."),
            Map.entry("recover", "Finishes stale transactions once, and says why it left others."),
            Map.entry("status", "Counts transactions by state and names the wait of the oldest."),
            Map.entry("verify", "Checks the books: total, no negative balance, nothing open."),
            Map.entry("inspect", "Prints a stored transaction."),
            Map.entry("cancel", "Cancels a transaction that has not reached its commit point."),
            Map.entry("prune", "Deletes finished transactions older than a duration."),
            Map.entry("demo", "A zero-setup tour in its own database."),
            Map.entry("tx", "Runs one generic transaction written in JSON."),
            Map.entry("read", "Prints one document, plain or as of the last commit."),
            Map.entry("bench", "Measures transfers per second and latency under load."),
            Map.entry("transactions", "Lists transactions by state, age, owner or application."),
            Map.entry("console", "Serves the web console: live counts, transactions, actions."),
            Map.entry("help", "Shows the help of mongo2pc or of one command."));

    public static void main(String[] args) {
        Signals.enable();
        System.exit(commandLine().execute(args));
    }

    /** The command line with mongo2pc's handling of usage errors (exit 2, {@code {"error"}} with --json). */
    public static CommandLine commandLine() {
        return configure(new CommandLine(new Main()));
    }

    static CommandLine configure(CommandLine cl) {
        cl.setParameterExceptionHandler(Main::usageError);
        for (CommandLine sub : cl.getSubcommands().values()) {
            String summary = SUMMARIES.get(sub.getCommandName());
            if (summary != null) {
                sub.getCommandSpec().usageMessage().header(summary);
            }
            showGlobalOptionsOnce(sub);
        }
        return cl;
    }

    /**
     * The global options are shown once, in {@code mongo2pc --help}: a command's help hides them
     * (they still work there) and says where they are.
     */
    private static void showGlobalOptionsOnce(CommandLine cl) {
        CommandSpec spec = cl.getCommandSpec();
        spec.usageMessage().abbreviateSynopsis(true);
        cl.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, help -> {
            CommandLine.Help.Layout layout = help.createDefaultLayout();
            spec.options().stream().filter(o -> !o.inherited() && !o.hidden())
                    .sorted(Comparator.comparing((OptionSpec o) -> o.longestName().replaceFirst("^-+", "")))
                    .forEach(o -> layout.addOption(o, help.createDefaultParamLabelRenderer()));
            return layout.toString();
        });
        List<String> footer = new ArrayList<>(List.of(spec.usageMessage().footer()));
        footer.add("Global options (--uri, --db, --app, --lease, --retry-timeout, --target):");
        footer.add("see `mongo2pc --help`.");
        spec.usageMessage().footer(footer.toArray(String[]::new));
        cl.getSubcommands().values().forEach(Main::showGlobalOptionsOnce);
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        String name = cl.getCommandSpec().qualifiedName(" ");
        String message = Words.plain(e.getMessage());
        err.println(name + ": " + message);
        if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
            err.println("Try '" + name + " --help' for more information.");
        }
        err.flush();
        if (Arrays.asList(args).contains("--json")) {
            ObjectNode error = Json.object();
            error.put("error", message);
            cl.getOut().println(Json.write(error));
            cl.getOut().flush();
        }
        return ExitCodes.BAD_INPUT;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing COMMAND (try 'mongo2pc --help')");
    }

    String uri() {
        return uri;
    }

    String database() {
        return database;
    }

    String application() {
        return application;
    }

    Duration lease() {
        return lease;
    }

    Duration retryTimeout() {
        return retryTimeout;
    }

    /** The targets given before the command ({@code --target NAME=URI}), name to URI. */
    Map<String, String> targets() {
        return targets;
    }
}
