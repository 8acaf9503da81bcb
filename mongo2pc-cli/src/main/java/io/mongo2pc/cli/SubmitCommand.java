package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionView;
import io.mongo2pc.bank.Amounts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.Optional;

/** {@code submit SRC DST AMOUNT [--id ID]}: queues a transfer as the tutorial's {@code initial} transaction. */
@Command(name = "submit", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"id\",\"state\",\"alreadySubmitted\",\"server\",\"data\"} (state: initial, or where an earlier",
                "submit with this --id has got to)"},
        description = {"Queues a transfer as an 'initial' transaction for `mongo2pc worker` and prints its id.",
                "With --id, the same command again queues nothing more: it says it was already submitted.",
                "Exit 0 queued; 2 bad input."})
final class SubmitCommand extends BaseCommand {
    @Mixin
    TransferArgs args;

    @Mixin
    IdOption idOption;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Number value = Amounts.parse(args.amount);
        Object given = idOption.id();
        Object id;
        Optional<TransactionView> before;
        try (Session session = open()) {
            before = given == null ? Optional.empty() : session.manager().inspect(given);
            id = TransactionIds.printable(session.bank().submit(given, args.source, args.destination, value));
        }
        String state = before.map(tx -> String.valueOf(TransactionRows.stateText(tx))).orElse("initial");
        if (json()) {
            ObjectNode node = Json.object();
            node.set("id", Json.value(id));
            node.put("state", state);
            node.put("alreadySubmitted", before.isPresent());
            printJson(where(node));
        } else {
            if (before.isPresent()) {
                err().println("mongo2pc submit: already submitted: transaction " + id + " is " + state);
                err().flush();
            }
            out().println(id);
            out().flush();
        }
        return ExitCodes.OK;
    }
}
