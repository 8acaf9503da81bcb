package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.RecoveryReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code recover}: one recovery pass over stale open transactions. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        description = "One pass over open transactions unchanged for --older-than (default: the lease): takes each over and "
                + "finishes it (pending and applied roll forward, canceling finishes its undo).")
final class RecoverCommand extends BaseCommand {
    @Option(names = "--older-than", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "only transactions unchanged for this long, by the server's clock (default: --lease)")
    Duration olderThan;

    @Option(names = "--target", paramLabel = "NAME=URI",
            description = "another MongoDB that operations of generic transactions reach (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Option(names = "--json", description = "print {\"rolledForward\",\"canceled\",\"skipped\",\"failed\",\"notStale\",\"lateInsertsRemoved\"}")
    boolean json;

    @Override
    boolean json() {
        return json;
    }

    @Override
    int run() {
        RecoveryReport report;
        try (Session session = Session.open(globals(), targets)) {
            Duration age = olderThan == null ? globals().lease() : olderThan;
            report = session.manager().recover(age);
        }
        if (json) {
            printJson(json(report));
        } else {
            say("recovery: " + report.rolledForward() + " rolled forward, " + report.canceled() + " canceled, "
                    + report.skipped() + " skipped (" + report.notStale().size() + " not stale yet, " + report.failed()
                    + " failed)" + (report.lateInsertsRemoved() == 0 ? ""
                    : ", " + report.lateInsertsRemoved() + " documents left by late inserts removed"));
            for (RecoveryReport.NotStale waiting : report.notStale()) {
                say("  " + TransactionIds.printable(waiting.id()) + ": its owner's lease runs until " + waiting.leaseEnds());
            }
        }
        return ExitCodes.OK;
    }

    /** {@code {"rolledForward","canceled","skipped","failed","notStale","lateInsertsRemoved"}}. */
    static ObjectNode json(RecoveryReport report) {
        ObjectNode node = Json.object();
        node.put("rolledForward", report.rolledForward());
        node.put("canceled", report.canceled());
        node.put("skipped", report.skipped());
        node.put("failed", report.failed());
        node.put("notStale", report.notStale().size());
        node.put("lateInsertsRemoved", report.lateInsertsRemoved());
        return node;
    }
}
