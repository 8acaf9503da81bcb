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
        footer = {"--json prints the stored transaction document in extended JSON (ids and dates typed);",
                "a commit written after its deadline shows as canceled, with \"lateCommit\": true and \"storedState\""},
        description = {"Prints the stored transaction document TXID.", "Exit 0 found; 4 not found."})
final class InspectCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "TXID", description = "a 24-hex ObjectId, a string, or an integer")
    String id;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Document doc;
        try (Session session = open()) {
            doc = view(session.manager(), id).map(InspectCommand::shown).orElseThrow(() -> notFound(session, id));
        }
        if (json()) {
            printJson(Json.extendedNode(doc)); // ids and dates typed, as the human output shows them
        } else {
            out().println(Json.extended(doc, true));
            out().flush();
        }
        return ExitCodes.OK;
    }

    /**
     * The stored document, except for a commit written after its deadline ({@link TransactionView#lateCommit}):
     * shown with the state, reason and code it counts with (canceled, TIMED_OUT), {@code lateCommit: true}
     * and the state it stores as {@code storedState}.
     */
    static Document shown(TransactionView view) {
        Document doc = new Document(view.document());
        if (view.lateCommit()) {
            doc.append("storedState", doc.get("state")).append("state", view.state().stored()).append("reason", view.reason())
                    .append("code", view.reasonCode().name()).append("lateCommit", true);
        }
        return doc;
    }

    /** "No transaction with id ... in db.transactions": exit 4, as {@code read}'s not found. */
    static CliException notFound(Session session, String id) {
        return new CliException(ExitCodes.NOT_FOUND, "no transaction with id " + id + " in " + session.database() + "."
                + session.manager().settings().transactionsCollection());
    }

    /** The stored document of the transaction typed as {@code text} on the command line. */
    static Optional<Document> find(TransactionManager manager, String text) {
        return view(manager, text).map(TransactionView::document);
    }

    /** The transaction typed as {@code text} on the command line. */
    static Optional<TransactionView> view(TransactionManager manager, String text) {
        for (Object candidate : TransactionIds.candidates(text)) {
            Optional<TransactionView> view = manager.inspect(candidate);
            if (view.isPresent()) {
                return view;
            }
        }
        return Optional.empty();
    }
}
