package io.mongo2pc.cli;

import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** {@code transactions list}: finds transactions by state, age, owner and application. */
@Command(name = "transactions", mixinStandardHelpOptions = true,
        description = "Lists stored transactions, newest first, to find the stuck, the canceled and their owners.",
        subcommands = {TransactionsCommand.ListTransactions.class})
final class TransactionsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing subcommand: list");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"Lists transactions, most recently changed first; AGE is the time since the last change (server clock).",
                    "Open ones whose owner's lease has run out are marked stale. --app filters by application.",
                    "Exit 0; 2 bad filter."},
            footer = {"--json prints {\"transactions\":[{\"id\",\"state\",\"age\",\"owner\",\"application\",\"epoch\",",
                    "\"reason\",\"code\",\"source\",\"destination\",\"value\",\"stale\"}],\"more\",\"next\",\"server\",\"data\"}"})
    static final class ListTransactions extends BaseCommand {
        @Option(names = "--state", paramLabel = "STATE",
                description = "only this state: initial, pending, applied, done, canceling, canceled (repeatable)")
        List<String> states = new ArrayList<>();

        @Option(names = "--older-than", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "only transactions unchanged for at least this long")
        Duration olderThan;

        @Option(names = "--owner", paramLabel = "OWNER", description = "only transactions of this owner, as listed")
        String owner;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
                description = "the most to list, 1 to 1000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Option(names = "--after", paramLabel = "CURSOR", description = "continue after a page: its \"next\" (see --json)")
        String after;

        @Mixin
        JsonOption json;

        @Override
        protected int run() {
            TransactionQuery query = query();
            TransactionPage page;
            Duration lease = globals().lease();
            try (Session session = open()) {
                page = session.manager().list(query);
            }
            if (json()) {
                printJson(where(TransactionRows.json(page, lease)));
            } else if (page.transactions().isEmpty()) {
                say("no transactions" + (query.after() == null ? "" : " after this cursor"));
            } else {
                TransactionRows.table(page, lease).forEach(this::say);
                if (page.more()) {
                    say("more: mongo2pc transactions list ... --after " + page.next());
                }
            }
            return ExitCodes.OK;
        }

        /** The filters, checked before connecting: bad input changes nothing and exits 2. */
        private TransactionQuery query() {
            TransactionQuery.Builder b = TransactionQuery.builder();
            try {
                states.forEach(s -> b.state(TransactionRows.state(s)));
                if (olderThan != null) {
                    b.olderThan(olderThan);
                }
                if (owner != null) {
                    b.owner(owner);
                }
                if (appGiven()) {
                    b.application(globals().application());
                }
                return b.limit(limit).after(after).build();
            } catch (IllegalArgumentException e) {
                throw CliException.badInput(e.getMessage());
            }
        }

        /** True if {@code --app} was typed, before or after the command (it is a global option). */
        private boolean appGiven() {
            CommandLine root = spec.commandLine();
            while (root.getParent() != null) {
                root = root.getParent();
            }
            for (CommandLine.ParseResult r = root.getParseResult(); r != null; r = r.subcommand()) {
                if (r.hasMatchedOption("--app")) {
                    return true;
                }
            }
            return false;
        }
    }
}
