package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.Values;
import io.mongo2pc.bank.Amounts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code transfer SRC DST AMOUNT [--id ID]}: one transfer run to its end in this process. */
@Command(name = "transfer", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"id\",\"state\",\"reason\",\"code\",\"source\",\"destination\",\"value\",\"alreadyRan\",\"server\",\"data\"}",
                "(alreadyRan: an earlier command with this --id ran it; this one only reports its outcome),",
                "and \"failedOperation\": {\"index\",\"target\",\"db\",\"coll\",\"id\"} when a refused operation canceled it"},
        description = {"Moves AMOUNT from account SRC to account DST in one transaction and waits for its end.",
                "With --id, the same command again is the same transfer: it says it already ran, with the same exit code.",
                "Exit 0 done; 3 canceled (e.g. insufficient funds); 2 bad input."})
final class TransferCommand extends BaseCommand {
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
        TransactionOutcome outcome;
        boolean alreadyRan;
        try (Session session = open()) {
            alreadyRan = given != null && session.manager().inspect(given).isPresent();
            outcome = session.bank().transfer(given, args.source, args.destination, value);
        }
        Object id = TransactionIds.printable(outcome.id());
        String already = alreadyRan ? "already ran: " : "";
        if (json()) {
            ObjectNode node = Json.outcome(id, outcome);
            node.put("source", args.source);
            node.put("destination", args.destination);
            node.set("value", Json.value(value));
            node.put("alreadyRan", alreadyRan);
            printJson(where(node));
        } else if (outcome.isDone()) {
            say(already + "transfer " + id + " done: " + Values.plain(value) + " from " + args.source + " to " + args.destination);
        } else {
            say(already + "transfer " + id + " canceled: " + outcome.reason());
        }
        if (!outcome.isDone()) {
            err().println("mongo2pc transfer: " + already + "transfer " + id + " of " + Values.plain(value) + " from " + args.source + " to "
                    + args.destination + " was canceled: " + outcome.reason());
            err().flush();
            return ExitCodes.CANCELED;
        }
        return ExitCodes.OK;
    }
}
