package io.mongo2pc.cli;

import io.mongo2pc.DocumentRef;
import org.bson.Document;
import org.bson.types.ObjectId;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@code read [--committed] [--target T] DB COLL ID}: one document, plain or as of the last committed transaction. */
@Command(name = "read", mixinStandardHelpOptions = true,
        footer = "--json prints the document",
        description = {"Prints one document. With --committed, as of the last committed transaction: never data of a",
                "transaction that is not committed or was canceled. Exit 0; 4 not found; 2 bad input."})
final class ReadCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "DB")
    String database;

    @Parameters(index = "1", paramLabel = "COLL")
    String collection;

    @Parameters(index = "2", paramLabel = "ID", description = "the _id: a string; 24 hex digits also as an ObjectId, an integer also as a number")
    String id;

    @Option(names = "--committed", description = "read as of the last committed transaction")
    boolean committed;

    @Option(names = "--target", paramLabel = "T|T=URI", description = "the target to read from: default, or NAME=URI for another MongoDB")
    String target = DocumentRef.DEFAULT_TARGET;

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Map<String, String> targets = new LinkedHashMap<>();
        String name = target;
        if (target.contains("=")) {
            name = target.substring(0, target.indexOf('='));
            targets.put(name, target.substring(target.indexOf('=') + 1));
        } else if (!target.equals(DocumentRef.DEFAULT_TARGET) && !globals().targets().containsKey(target)) {
            throw CliException.badInput("unknown target '" + target + "': give it as --target NAME=URI");
        }
        String problem = DocumentRef.databaseNameProblem(database);
        if (problem == null && !collection.startsWith("system.")) { // a plain read of a system collection is allowed
            problem = DocumentRef.collectionNameProblem(collection);
        }
        if (problem != null) {
            throw CliException.badInput("invalid database or collection name " + database + "." + collection + ": " + problem);
        }
        try (Session session = open(targets)) {
            for (Object candidate : candidates(id)) {
                DocumentRef ref = new DocumentRef(name, database, collection, candidate);
                Optional<Document> doc = committed ? session.manager().readCommitted(ref) : session.manager().read(ref);
                if (doc.isPresent()) {
                    if (json()) {
                        printJson((com.fasterxml.jackson.databind.node.ObjectNode) Json.value(doc.get()));
                    } else {
                        say(Json.extended(doc.get(), false)); // a Decimal128 as --json shows it
                    }
                    return ExitCodes.OK;
                }
            }
        }
        return fail(ExitCodes.NOT_FOUND, "no document " + id + " in " + name + "/" + database + "." + collection
                + (committed ? " as of the last committed transaction" : ""));
    }

    private static List<Object> candidates(String id) {
        List<Object> candidates = new ArrayList<>();
        candidates.add(id);
        if (ObjectId.isValid(id)) {
            candidates.add(new ObjectId(id));
        }
        if (id.matches("-?\\d{1,18}")) {
            long n = Long.parseLong(id);
            candidates.add(n);
            if (n == (int) n) {
                candidates.add((int) n);
            }
        }
        return candidates;
    }
}
