package io.mongo2pc.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionOutcome;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code tx FILE|-}: one generic transaction described in JSON, run to its end. */
@Command(name = "tx", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"id\",\"state\",\"reason\",\"code\",\"alreadyRan\",\"server\",\"data\"} (alreadyRan: an earlier",
                "command with this --id ran it; this one only reports its outcome), and \"failedOperation\":",
                "{\"index\",\"target\",\"db\",\"coll\",\"id\"} (index from 0) when a refused operation canceled it",
                "",
                "A transaction is {\"ops\": [OP, ...]}: its operations, all in effect or none. Every OP has",
                "  \"op\"      insert, update, delete or inc",
                "  \"db\"      the database, \"coll\" the collection",
                "  \"target\"  the MongoDB: default (--uri), or NAME of --target NAME=URI (optional)",
                "  \"id\"      the document's _id (an insert takes it from its doc)",
                "  \"guard\"   a filter the document must match, or the transaction is canceled",
                "            (optional; not for insert)",
                "and by op:",
                "  insert  \"doc\": the new document with its _id; canceled if the _id exists",
                "    {\"op\": \"insert\", \"db\": \"shop\", \"coll\": \"payments\", \"doc\": {\"_id\": \"p1\", \"amount\": 30}}",
                "  update  \"update\": update operators ($set, $inc, $unset, ...) or a whole new document",
                "    {\"op\": \"update\", \"db\": \"shop\", \"coll\": \"orders\", \"id\": \"o1\",",
                "     \"update\": {\"$set\": {\"state\": \"Paid\"}}, \"guard\": {\"state\": \"UnPaid\"}}",
                "  delete  nothing more; the document is deleted when the transaction commits",
                "    {\"op\": \"delete\", \"db\": \"shop\", \"coll\": \"carts\", \"id\": \"c9\"}",
                "  inc     \"inc\": {FIELD: AMOUNT, ...}; many transactions may increment one document",
                "    {\"op\": \"inc\", \"db\": \"bank\", \"coll\": \"accounts\", \"id\": \"A\",",
                "     \"inc\": {\"balance\": -30}, \"guard\": {\"balance\": {\"$gte\": 30}}}",
                "  \"allowTypeChange\": true (inc and update) lets an increment change a stored number's type",
                "    or scale: an integer into a double or decimal, 10.00 into 10.001. Without it, refused (2):",
                "    {\"op\": \"inc\", \"db\": \"shop\", \"coll\": \"stock\", \"id\": \"w\", \"inc\": {\"qty\": 1.5}, \"allowTypeChange\": true}",
                "Strict JSON in UTF-8; MongoDB's extended JSON types are fine ({\"$numberDecimal\": \"1.5\"})."},
        description = {"Runs one generic transaction described in JSON, from FILE or - for standard input, to its end.",
                "With --id, the same command again is the same transaction: it says it already ran, with the same exit code.",
                "Exit 0 done; 3 canceled (a guard, a missing document, an existing _id, a conflict); 2 bad input."})
final class TxCommand extends BaseCommand {
    @Parameters(index = "0", paramLabel = "FILE|-", description = "the transaction's JSON file, or - to read standard input")
    String file;

    @Option(names = "--target", paramLabel = "NAME=URI", description = "another MongoDB reached by operations with \"target\": NAME (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Mixin
    IdOption idOption;

    @Mixin
    JsonOption json;

    /** Strict JSON: one value, no trailing text, no duplicate keys, quoted names, no comments. */
    private static final ObjectMapper STRICT = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    @Override
    protected int run() throws IOException {
        String text = read(file);
        String source = file.equals("-") ? "standard input" : file;
        if (text.isBlank()) {
            throw CliException.badInput(source + " is empty: a transaction is {\"ops\": [...]} (see `mongo2pc tx --help`)");
        }
        try {
            if (!STRICT.readTree(text).isObject()) {
                throw CliException.badInput(source + " is not a JSON object: a transaction is {\"ops\": [...]}"
                        + " (see `mongo2pc tx --help`)");
            }
        } catch (JsonProcessingException e) {
            // TransactionJson reads MongoDB's lenient extended JSON (last duplicate key wins, text
            // after the object ignored): a file that says two things must not run either of them
            throw CliException.badInput("not valid JSON in " + source + ": " + JsonErrors.of(e));
        }
        List<Operation> operations = TransactionJson.parse(text);
        Object given = idOption.id();
        TransactionOutcome outcome;
        boolean alreadyRan;
        try (Session session = openCreatingData(targets)) {
            alreadyRan = given != null && session.manager().inspect(given).isPresent();
            outcome = given == null ? session.manager().run(operations) : session.manager().run(given, operations);
        }
        Object id = TransactionIds.printable(outcome.id());
        if (json()) {
            ObjectNode node = Json.outcome(id, outcome);
            node.put("alreadyRan", alreadyRan);
            printJson(where(node));
        } else {
            say((alreadyRan ? "already ran: " : "") + "transaction " + id + " " + outcome.state().stored()
                    + (outcome.failedOperation() == null ? ""
                    : " by operation " + outcome.failedOperation().index() + " on " + outcome.failedOperation().document())
                    + (outcome.reason() == null ? "" : ": " + outcome.reason()));
        }
        return outcome.isDone() ? ExitCodes.OK : ExitCodes.CANCELED;
    }

    private String read(String file) throws IOException {
        byte[] bytes;
        if (file.equals("-")) {
            bytes = System.in.readAllBytes();
        } else {
            Path path = Path.of(file);
            if (Files.isDirectory(path)) {
                throw CliException.badInput(file + " is a directory, not a JSON file");
            }
            try {
                bytes = Files.readAllBytes(path);
            } catch (NoSuchFileException e) {
                throw CliException.badInput("no such file: " + file);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw CliException.badInput((file.equals("-") ? "standard input" : file) + " is not UTF-8 text");
        }
    }
}
