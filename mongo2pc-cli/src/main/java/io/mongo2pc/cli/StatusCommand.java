package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Map;

/** {@code status}: transactions per state, markers on accounts, and the recovery lag. */
@Command(name = "status", mixinStandardHelpOptions = true,
        footer = "--json prints {\"initial\",\"pending\",\"applied\",\"done\",\"canceling\",\"canceled\",\"markers\",\"oldestOpenSeconds\"}",
        description = "Counts transactions in each state, markers left on accounts, and how long the oldest open transaction has waited.")
final class StatusCommand extends BaseCommand {
    @Mixin
    JsonOption json;

    @Override
    int run() {
        Map<TransactionState, Long> counts;
        long markers;
        Duration oldest;
        try (Session session = open()) {
            counts = session.manager().counts();
            markers = session.bank().markers();
            oldest = session.manager().oldestOpen();
        }
        BigDecimal oldestSeconds = BigDecimal.valueOf(oldest.toMillis()).movePointLeft(3).setScale(3, RoundingMode.UNNECESSARY);
        if (json()) {
            ObjectNode node = Json.object();
            for (TransactionState state : TransactionState.values()) {
                node.put(state.stored(), counts.getOrDefault(state, 0L));
            }
            node.put("markers", markers);
            node.put("oldestOpenSeconds", oldestSeconds);
            printJson(node);
        } else {
            StringBuilder line = new StringBuilder("transactions:");
            for (TransactionState state : TransactionState.values()) {
                line.append(' ').append(state.stored()).append('=').append(counts.getOrDefault(state, 0L));
            }
            say(line.toString());
            say("markers on accounts: " + markers);
            say("oldest open transaction: " + (oldest.isZero() ? "none" : oldestSeconds.toPlainString() + "s ago"));
        }
        return ExitCodes.OK;
    }
}
