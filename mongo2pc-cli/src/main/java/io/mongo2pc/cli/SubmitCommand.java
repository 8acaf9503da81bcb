package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.bank.Amounts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code submit SRC DST AMOUNT}: queues a transfer as the tutorial's {@code initial} transaction. */
@Command(name = "submit", mixinStandardHelpOptions = true,
        description = {"Queues a transfer as an 'initial' transaction for `mongo2pc worker` and prints its id.",
                "Exit 0 queued; 2 bad input."})
final class SubmitCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "SRC", description = "source account id")
    String source;

    @Parameters(index = "1", paramLabel = "DST", description = "destination account id")
    String destination;

    @Parameters(index = "2", paramLabel = "AMOUNT", description = "an integer of minor units, or a decimal such as 12.50")
    String amount;

    @Option(names = "--json", description = "print {\"id\",\"state\"}")
    boolean json;

    @Override
    boolean json() {
        return json;
    }

    @Override
    int run() {
        Number value = Amounts.parse(amount);
        Object id;
        try (Session session = open()) {
            id = TransactionIds.printable(session.bank().submit(source, destination, value));
        }
        if (json) {
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
