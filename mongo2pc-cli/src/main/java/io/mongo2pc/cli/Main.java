package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Arrays;

/**
 * The {@code mongo2pc} command line. Global options come before the command:
 * <pre>
 * mongo2pc [--uri URI] [--db NAME] [--app NAME] [--lease DURATION] COMMAND ...
 * </pre>
 * Exit codes: 0 ok; 1 not ok or an unexpected error; 2 bad input; 3 canceled / cannot cancel.
 */
@Command(name = "mongo2pc", mixinStandardHelpOptions = true, version = "mongo2pc 0.1.0",
        description = "Multi-document transactions on MongoDB with the two-phase-commit protocol of MongoDB's "
                + "tutorial \"Perform Two Phase Commits\".",
        footer = {"", "Without --uri, commands use the embedded server; its data lives in the folder",
                "mongo2pc-data of the current directory (or they join `mongo2pc serve` running there).",
                "Exit codes: 0 ok; 1 not ok or unexpected error; 2 bad input; 3 canceled / cannot cancel."},
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
        return cl;
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        PrintWriter err = cl.getErr();
        String name = cl.getCommandSpec().qualifiedName(" ");
        err.println(name + ": " + e.getMessage());
        if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
            err.println("Try '" + name + " --help' for more information.");
        }
        err.flush();
        if (Arrays.asList(args).contains("--json")) {
            ObjectNode error = Json.object();
            error.put("error", e.getMessage());
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
}
