package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.Values;
import io.mongo2pc.bank.Amounts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code transfer SRC DST AMOUNT}: one transfer run to its end in this process. */
@Command(name = "transfer", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"id\",\"state\",\"reason\",\"code\",\"source\",\"destination\",\"value\"}, and",
                "\"failedOperation\": {\"index\",\"target\",\"db\",\"coll\",\"id\"} when a refused operation canceled it"},
        description = {"Moves AMOUNT from account SRC to account DST in one transaction and waits for its end.",
                "Exit 0 done; 3 canceled (e.g. insufficient funds); 2 bad input."})
final class TransferCommand extends BaseCommand {
    @Mixin
    TransferArgs args;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Number value = Amounts.parse(args.amount);
        TransactionOutcome outcome;
        try (Session session = open()) {
            outcome = session.bank().transfer(args.source, args.destination, value);
        }
        Object id = TransactionIds.printable(outcome.id());
        if (json()) {
            ObjectNode node = Json.outcome(id, outcome);
            node.put("source", args.source);
            node.put("destination", args.destination);
            node.set("value", Json.value(value));
            printJson(node);
        } else if (outcome.isDone()) {
            say("transfer " + id + " done: " + Values.plain(value) + " from " + args.source + " to " + args.destination);
        } else {
            say("transfer " + id + " canceled: " + outcome.reason());
        }
        if (!outcome.isDone()) {
            err().println("mongo2pc transfer: transfer " + id + " of " + Values.plain(value) + " from " + args.source + " to "
                    + args.destination + " was canceled: " + outcome.reason());
            err().flush();
            return ExitCodes.CANCELED;
        }
        return ExitCodes.OK;
    }
}
