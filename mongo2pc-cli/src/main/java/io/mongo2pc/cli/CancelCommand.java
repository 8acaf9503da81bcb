package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.CancelResult;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code cancel TXID}: cancels a transaction that has not reached its commit point. */
@Command(name = "cancel", mixinStandardHelpOptions = true,
        footer = "--json prints {\"id\",\"state\",\"reason\",\"code\",\"alreadyCanceled\",\"server\",\"data\"}",
        description = {"Cancels transaction TXID: a queued one at once, a pending one once its owner's lease has expired.",
                "Exit 0 canceled; 4 not found; 3 cannot cancel (past its commit point, or owned by a live owner)."})
final class CancelCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "TXID", description = "a 24-hex ObjectId, a string, or an integer")
    String id;

    @Option(names = "--reason", paramLabel = "TEXT", defaultValue = "canceled by request (mongo2pc cancel)",
            description = "stored as the transaction's reason")
    String reason;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        CancelResult result;
        try (Session session = open()) {
            Document doc = InspectCommand.find(session.manager(), id).orElseThrow(() -> InspectCommand.notFound(session, id));
            result = session.manager().cancel(doc.get("_id"), reason);
        }
        switch (result.kind()) {
            case NOT_FOUND -> throw new CliException(ExitCodes.NOT_FOUND, result.reason());
            case OWNER_ALIVE, ROLLED_FORWARD -> throw new CliException(ExitCodes.CANCELED, "cannot cancel: " + result.reason());
            default -> { }
        }
        Object printable = TransactionIds.printable(result.id());
        boolean before = result.kind() == CancelResult.Kind.ALREADY_CANCELED;
        if (json()) {
            printJson(where(json(result)));
        } else {
            say("transaction " + printable + (before ? " was already canceled: " : " canceled: ") + result.reason());
        }
        return ExitCodes.OK;
    }

    /** {@code {"id","state","reason","code","alreadyCanceled"}} of a cancel that canceled (now or before). */
    static ObjectNode json(CancelResult result) {
        ObjectNode node = Json.outcome(TransactionIds.printable(result.id()), result.state(), result.reason(), result.reasonCode());
        node.put("alreadyCanceled", result.kind() == CancelResult.Kind.ALREADY_CANCELED);
        return node;
    }
}
