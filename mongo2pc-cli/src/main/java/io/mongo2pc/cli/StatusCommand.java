package io.mongo2pc.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code status}: transactions per state, markers on accounts, and the recovery lag. */
@Command(name = "status", mixinStandardHelpOptions = true,
        footer = "--json prints {\"initial\",\"pending\",\"applied\",\"done\",\"canceling\",\"canceled\",\"markers\",\"oldestOpenSeconds\",\"oldestOpenId\"}",
        description = "Counts transactions in each state, markers left on accounts, and how long the oldest open transaction has waited.")
final class StatusCommand extends BaseCommand {
    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        StatusReport report;
        try (Session session = open()) {
            report = StatusReport.read(session);
        }
        if (json()) {
            printJson(report.json());
        } else {
            report.lines().forEach(this::say);
        }
        return ExitCodes.OK;
    }
}
