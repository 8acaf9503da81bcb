package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.bank.Amounts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code submit SRC DST AMOUNT}: queues a transfer as the tutorial's {@code initial} transaction. */
@Command(name = "submit", mixinStandardHelpOptions = true,
        footer = "--json prints {\"id\",\"state\"}",
        description = {"Queues a transfer as an 'initial' transaction for `mongo2pc worker` and prints its id.",
                "Exit 0 queued; 2 bad input."})
final class SubmitCommand extends BaseCommand {
    @Mixin
    TransferArgs args;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Number value = Amounts.parse(args.amount);
        Object id;
        try (Session session = open()) {
            id = TransactionIds.printable(session.bank().submit(args.source, args.destination, value));
        }
        if (json()) {
            ObjectNode node = Json.object();
            node.set("id", Json.value(id));
            node.put("state", "initial");
            printJson(node);
        } else {
            out().println(id);
            out().flush();
        }
        return ExitCodes.OK;
    }
}
