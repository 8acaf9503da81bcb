package io.mongo2pc.cli;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionView;
import org.bson.Document;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.Optional;

/** {@code inspect TXID}: the stored transaction document. */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        footer = "--json prints the stored transaction document in extended JSON (ids and dates typed)",
        description = {"Prints the stored transaction document TXID.", "Exit 0 found; 2 unknown id."})
final class InspectCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "TXID", description = "a 24-hex ObjectId, a string, or an integer")
    String id;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Document doc;
        try (Session session = open()) {
            doc = find(session.manager(), id).orElseThrow(() -> CliException.badInput("no transaction with id " + id
                    + " in " + session.database() + "." + session.manager().settings().transactionsCollection()));
        }
        if (json()) {
            printJson(Json.extendedNode(doc)); // ids and dates typed, as the human output shows them
        } else {
            out().println(Json.extended(doc, true));
            out().flush();
        }
        return ExitCodes.OK;
    }

    /** The stored document of the transaction typed as {@code text} on the command line. */
    static Optional<Document> find(TransactionManager manager, String text) {
        for (Object candidate : TransactionIds.candidates(text)) {
            Optional<TransactionView> view = manager.inspect(candidate);
            if (view.isPresent()) {
                return Optional.of(view.get().document());
            }
        }
        return Optional.empty();
    }
}
