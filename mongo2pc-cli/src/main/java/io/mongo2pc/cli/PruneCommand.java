package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;

/** {@code prune --older-than DURATION}: deletes finished transactions. */
@Command(name = "prune", mixinStandardHelpOptions = true,
        footer = "--json prints {\"deleted\"}",
        description = "Deletes done and canceled transactions unchanged for --older-than (by the server's clock); prints how many.")
final class PruneCommand extends BaseCommand {
    @Option(names = "--older-than", paramLabel = "DURATION", required = true, converter = DurationConverter.class,
            description = "only transactions finished at least this long ago")
    Duration olderThan;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        long deleted;
        try (Session session = open()) {
            deleted = session.manager().prune(olderThan);
        }
        if (json()) {
            ObjectNode node = Json.object();
            node.put("deleted", deleted);
            printJson(node);
        } else {
            say("deleted " + deleted + " finished transaction(s) older than " + DurationConverter.format(olderThan));
        }
        return ExitCodes.OK;
    }
}
