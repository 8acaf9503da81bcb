package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** {@code status}: transactions per state, markers on accounts, and the recovery lag. */
@Command(name = "status", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"initial\",\"pending\",\"applied\",\"done\",\"canceling\",\"canceled\",\"markers\",\"oldestOpenSeconds\",\"oldestOpenId\",",
                "\"server\",\"data\"}; with --markers also \"markerList\": [{\"account\",\"transaction\",\"state\",\"stale\"}]"},
        description = {"Counts transactions in each state, markers left on accounts, and how long the oldest open transaction has waited.",
                "--markers lists every marker it counts: which account, which transaction, and that transaction's state."})
final class StatusCommand extends BaseCommand {
    @Option(names = "--markers", description = "list every marker on accounts with its transaction and that transaction's state")
    boolean markers;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        StatusReport report;
        List<MarkerRows.Row> rows = List.of();
        Instant now = null;
        Duration lease;
        try (Session session = open()) {
            report = StatusReport.read(session);
            if (markers) {
                rows = MarkerRows.read(session);
                now = session.manager().serverTime();
            }
            lease = session.manager().settings().lease();
        }
        if (json()) {
            ObjectNode node = report.json();
            if (markers) {
                node.set("markerList", MarkerRows.json(rows, now, lease));
            }
            printJson(where(node));
        } else {
            report.lines().forEach(this::say);
            if (!markers && report.markers() > 0) {
                say("  (`mongo2pc status --markers` lists them: which account, which transaction)");
            }
            for (MarkerRows.Row row : rows) {
                say("  " + MarkerRows.describe(row, now, lease));
            }
        }
        return ExitCodes.OK;
    }
}
