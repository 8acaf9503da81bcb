package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.mongodb.MongoException;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionException;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * What every command shares: the global options, its output streams, and one place that turns
 * exceptions into a one-line message on stderr (plus {@code {"error": ...}} on stdout with
 * {@code --json}) and an exit code: 2 for bad input, 1 for everything unexpected.
 */
public abstract class BaseCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** Where the last session this command opened connected, or null. */
    private Connection.Where where;

    /** True when the command was asked for one JSON object on stdout (its {@link JsonOption}). */
    protected boolean json() {
        for (CommandSpec mixin : spec.mixins().values()) {
            if (mixin.userObject() instanceof JsonOption option) {
                return option.enabled;
            }
        }
        return false;
    }

    protected abstract int run() throws Exception;

    @Override
    public final Integer call() {
        try {
            return run();
        } catch (CliException e) {
            return fail(e.exitCode(), e.getMessage());
        } catch (InvalidTransactionException e) {
            return fail(ExitCodes.BAD_INPUT, e.getMessage());
        } catch (OutcomeUnknownException e) {
            return fail(ExitCodes.NOT_OK, "outcome unknown: " + e.getMessage()
                    + (e.transactionId() == null ? "" : "; see `mongo2pc inspect "
                    + TransactionIds.printable(e.transactionId()) + "` later"));
        } catch (LeaseLostException e) {
            return fail(ExitCodes.NOT_OK, "another process took the transaction over: " + e.getMessage());
        } catch (TransactionException e) {
            return fail(ExitCodes.NOT_OK, e.getMessage());
        } catch (MongoException e) {
            return fail(ExitCodes.NOT_OK, "database error: " + Connection.firstLine(e.getMessage()));
        } catch (Exception e) {
            if (System.getenv("MONGO2PC_DEBUG") != null) {
                e.printStackTrace(err());
            }
            return fail(ExitCodes.NOT_OK, "unexpected error: " + Connection.rootMessage(e));
        }
    }

    int fail(int exitCode, String said) {
        String message = Words.plain(said);
        err().println("mongo2pc " + commandName() + ": " + message);
        err().flush();
        if (json()) {
            ObjectNode error = Json.object();
            error.put("error", message);
            printJson(error);
        }
        return exitCode;
    }

    protected void printJson(ObjectNode node) {
        out().println(Json.write(node));
        out().flush();
    }

    protected PrintWriter out() {
        return spec.commandLine().getOut();
    }

    protected PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** Prints a human line on stdout (nothing with --json). */
    protected void say(String line) {
        if (!json()) {
            out().println(line);
            out().flush();
        }
    }

    String commandName() {
        return spec.qualifiedName(" ").replaceFirst("^mongo2pc ?", "");
    }

    /** The global options of the root command. */
    Main globals() {
        CommandLine cl = spec.commandLine();
        while (cl.getParent() != null) {
            cl = cl.getParent();
        }
        return (Main) cl.getCommand();
    }

    /** A session for a command that only reads or acts on existing data (it never creates a data folder). */
    protected Session open() {
        return open(Map.of());
    }

    /** {@link #open()} whose manager also reaches {@code targets} (name to URI). */
    protected Session open(Map<String, String> targets) {
        return connected(Session.open(globals(), targets, globals().database(), false, false));
    }

    /** A session for a command that writes new data: without --uri, it may start the data folder here. */
    protected Session openCreatingData(Map<String, String> targets) {
        return connected(Session.open(globals(), targets, globals().database(), false, true));
    }

    /**
     * A session on {@code database} for a long-running command that may start the data folder here
     * and serves an embedded server it starts to the other commands in this folder.
     */
    Session openServing(String database) {
        return connected(Session.open(globals(), Map.of(), database, true, true));
    }

    /** Says on stderr which server and data folder the command uses (its first line), and keeps it for --json. */
    private Session connected(Session session) {
        where = session.connection().where();
        err().println("mongo2pc " + commandName() + ": " + where.said() + ", database " + session.database());
        err().flush();
        return session;
    }

    /** {@code node} with the keys {@code "server"} and {@code "data"} of the last session opened (see {@link Connection.Where}). */
    protected ObjectNode where(ObjectNode node) {
        if (where != null) {
            node.put("server", where.server());
            node.put("data", where.data());
        }
        return node;
    }
}
