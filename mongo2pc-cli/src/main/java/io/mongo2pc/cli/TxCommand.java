package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionJson;
import io.mongo2pc.TransactionOutcome;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code tx FILE|-}: one generic transaction described in JSON, run to its end. */
@Command(name = "tx", mixinStandardHelpOptions = true,
        description = {"Runs one generic transaction described in JSON ({\"ops\": [...]}, from FILE or - for stdin) to its end.",
                "Operations: insert (doc), update (update operators or a replacement; guard), delete (guard), inc (inc; guard).",
                "Exit 0 done; 3 canceled (a guard, a missing document, an existing _id, a conflict); 2 bad input."})
final class TxCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "FILE|-", description = "the transaction's JSON file, or - to read standard input")
    String file;

    @Option(names = "--target", paramLabel = "NAME=URI", description = "another MongoDB reached by operations with \"target\": NAME (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Option(names = "--json", description = "print {\"id\",\"state\",\"reason\"}")
    boolean json;

    @Override
    boolean json() {
        return json;
    }

    @Override
    int run() throws IOException {
        List<Operation> operations = TransactionJson.parse(read(file));
        TransactionOutcome outcome;
        try (Session session = Session.open(globals(), targets)) {
            outcome = session.manager().run(operations);
        }
        Object id = TransactionIds.printable(outcome.id());
        if (json) {
            ObjectNode node = Json.outcome(id, outcome);
            printJson(node);
        } else {
            say("transaction " + id + " " + outcome.state().stored() + (outcome.reason() == null ? "" : ": " + outcome.reason()));
        }
        return outcome.isDone() ? ExitCodes.OK : ExitCodes.CANCELED;
    }

    private String read(String file) throws IOException {
        if (file.equals("-")) {
            InputStream in = System.in;
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        try {
            return Files.readString(Path.of(file));
        } catch (NoSuchFileException e) {
            throw CliException.badInput("no such file: " + file);
        }
    }
}
