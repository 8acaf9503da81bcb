package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.PruneResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;

/** {@code prune --older-than DURATION [--force] [--dry-run] [--include-canceled] [--forget-ids]}: removes finished transactions. */
@Command(name = "prune", mixinStandardHelpOptions = true,
        footer = {"Each pruned transaction leaves a stub (its id and outcome): the id keeps answering for it and never runs"
                + " again. Refuses an age below the longest lease of the transactions' owners plus the clock-skew margin"
                + " unless --force (exit 2).",
                "--json prints {\"deleted\",\"done\",\"canceled\",\"canceledKept\",\"dryRun\",\"idsKept\",\"minimumAge\"}"},
        description = "Removes done transactions (and canceled ones with --include-canceled) unchanged for --older-than"
                + " (by the server's clock); prints how many.")
final class PruneCommand extends BaseCommand {
    @Option(names = "--older-than", paramLabel = "DURATION", required = true, converter = DurationConverter.class,
            description = "only transactions finished at least this long ago")
    Duration olderThan;

    @Option(names = "--force", description = "accept an age below the longest lease plus the clock-skew margin")
    boolean force;

    @Option(names = "--dry-run", description = "count what would be removed, by state; remove nothing")
    boolean dryRun;

    @Option(names = "--include-canceled", description = "remove canceled transactions too (kept by default: the record of"
            + " what was refused, and why)")
    boolean includeCanceled;

    @Option(names = "--forget-ids", description = "leave no stub, and remove the stubs of earlier prunes as old: their ids"
            + " may then run again as new transactions")
    boolean forgetIds;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        PruneOptions options = PruneOptions.builder().force(force).dryRun(dryRun).includeCanceled(includeCanceled)
                .forgetIds(forgetIds).build();
        PruneResult result;
        try (Session session = open()) {
            result = session.manager().prune(olderThan, options);
        } catch (InvalidTransactionException e) {
            throw CliException.badInput(e.getMessage() + " with --force");
        }
        if (json()) {
            printJson(json(result));
        } else {
            say(sentence(result));
        }
        return ExitCodes.OK;
    }

    /** The result as {@code prune --json} prints it. */
    static ObjectNode json(PruneResult result) {
        ObjectNode node = Json.object();
        node.put("deleted", result.dryRun() ? 0 : result.pruned());
        node.put("done", result.done());
        node.put("canceled", result.canceled());
        node.put("canceledKept", result.canceledKept());
        node.put("dryRun", result.dryRun());
        node.put("idsKept", result.idsKept());
        node.put("minimumAge", DurationConverter.format(result.minimumAge()));
        return node;
    }

    private String sentence(PruneResult result) {
        StringBuilder b = new StringBuilder(result.dryRun() ? "would delete " : "deleted ").append(result.pruned())
                .append(" finished transaction(s) older than ").append(DurationConverter.format(olderThan))
                .append(" (").append(result.done()).append(" done, ").append(result.canceled()).append(" canceled)");
        if (result.canceledKept() > 0) {
            b.append("; kept ").append(result.canceledKept()).append(" canceled (--include-canceled removes them)");
        }
        b.append(result.idsKept() ? "; their ids stay taken (a stub each)" : "; their ids are forgotten");
        return b.toString();
    }
}
