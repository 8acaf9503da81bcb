package io.mongo2pc.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code status}: transactions per state, markers on accounts, and the recovery lag. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Counts transactions in each state, markers left on accounts, and how long the oldest open transaction has waited.")
final class StatusCommand extends BaseCommand {
    @Option(names = "--json", description = "print {\"initial\",\"pending\",\"applied\",\"done\",\"canceling\",\"canceled\",\"markers\",\"oldestOpenSeconds\",\"oldestOpenId\"}")
    boolean json;

    @Override
    boolean json() {
        return json;
    }

    @Override
    int run() {
        StatusReport report;
        try (Session session = open()) {
            report = StatusReport.read(session);
        }
        if (json) {
            printJson(report.json());
        } else {
            report.lines().forEach(this::say);
        }
        return ExitCodes.OK;
    }
}
