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
import java.time.Instant;
import java.util.function.UnaryOperator;
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
                    "\"reason\",\"code\",\"source\",\"destination\",\"value\",\"stale\"}],\"more\",\"next\",\"total\",\"server\",\"data\"}",
                    "(total: how many match; a row canceled by a refused operation adds \"failedOperation\")"})
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

        @Option(names = "--from", paramLabel = "TIME",
                description = "only transactions last changed at or after TIME: 2024-01-31T12:00:00Z, or a duration ago (1h)")
        String from;

        @Option(names = "--to", paramLabel = "TIME", description = "only transactions last changed before TIME (as --from)")
        String to;

        @Option(names = "--touching", paramLabel = "ID",
                description = "only transactions with an operation on the document of this _id (an account: its transfers)")
        String touching;

        @Mixin
        JsonOption json;

        @Override
        protected int run() {
            UnaryOperator<Instant> fromTime = from == null ? null : TransactionRows.time("--from", from);
            UnaryOperator<Instant> toTime = to == null ? null : TransactionRows.time("--to", to);
            TransactionQuery query = query(null, null);
            TransactionPage page;
            long total;
            Duration lease = globals().lease();
            try (Session session = open()) {
                if (fromTime != null || toTime != null) {
                    Instant now = session.manager().serverTime();
                    query = query(fromTime == null ? null : fromTime.apply(now), toTime == null ? null : toTime.apply(now));
                }
                page = session.manager().list(query);
                total = session.manager().count(query);
            }
            if (json()) {
                printJson(where(TransactionRows.json(page, lease, total)));
            } else if (page.transactions().isEmpty()) {
                say("no transactions" + (query.after() == null ? "" : " after this cursor"));
            } else {
                TransactionRows.table(page, lease).forEach(this::say);
                say(total + " transaction" + (total == 1 ? "" : "s") + " match");
                if (page.more()) {
                    say("more: mongo2pc transactions list ... --after " + page.next());
                }
            }
            return ExitCodes.OK;
        }

        /** The filters, checked before connecting: bad input changes nothing and exits 2. */
        private TransactionQuery query(Instant changedFrom, Instant changedTo) {
            TransactionQuery.Builder b = TransactionQuery.builder();
            try {
                b.changedBetween(changedFrom, changedTo);
                if (touching != null) {
                    b.touching(touching);
                }
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
