package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every command fed bad input of several kinds answers in the user's words: no Java class name,
 * no stack trace, no Java spelling of a value ({@code PT0S}, {@code Document{{...}}}) on stderr or
 * in the {@code {"error"}} of --json; and the exit code says bad input (2), or 1 when the server
 * cannot be reached.
 */
class NoJavaInMessagesTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final Pattern JAVA = JavaLeaks.JAVA;

    @TempDir
    Path dir;
    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "1000").exitCode()).isZero();
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    private String file(String name, String json) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, json);
        return file.toString();
    }

    private static String op(String fields) {
        return "{\"ops\": [{\"op\": \"update\", \"db\": \"d\", \"coll\": \"c\", " + fields + "}]}";
    }

    /** Each bad command line, with what it reads on standard input (null: nothing). */
    private List<String[]> badCommands() throws IOException {
        List<String[]> bad = new ArrayList<>();
        for (String amount : List.of("0", "-5", "abc", "99999999999999999999", "1e3", "1.505", "1.2.3", "")) {
            bad.add(new String[]{"transfer", "A", "B", amount});
            bad.add(new String[]{"submit", "A", "B", amount});
            if (!amount.equals("0") && !amount.equals("1.505")) { // both fine as opening balances
                bad.add(new String[]{"accounts", "create", "N" + bad.size(), amount});
            }
        }
        bad.add(new String[]{"transfer", "A", "A", "5"});
        bad.add(new String[]{"transfer", "A", "Z", "5"});
        bad.add(new String[]{"transfer", "A", "B"});
        bad.add(new String[]{"accounts", "create", "A", "5"});
        bad.add(new String[]{"accounts", "create", "", "5"});
        bad.add(new String[]{"accounts"});
        bad.add(new String[]{"frobnicate"});
        for (String lease : List.of("0", "5 minutes", "-1s", "PT-1S", "99999999d")) {
            bad.add(new String[]{"--lease", lease, "status"});
        }
        bad.add(new String[]{"recover", "--older-than", "-1s"});
        bad.add(new String[]{"recover", "--target", "nonsense"});
        bad.add(new String[]{"prune", "--older-than", "abc"});
        bad.add(new String[]{"prune"});
        bad.add(new String[]{"worker", "--threads", "0"});
        bad.add(new String[]{"worker", "--threads", "abc"});
        bad.add(new String[]{"worker", "--scan-period", "0"});
        bad.add(new String[]{"verify", "--expect-total", "abc"});
        for (String id : List.of("", "nope", "{\"$gt\": \"\"}", "000000000000000000000000")) {
            bad.add(new String[]{"inspect", id});
            bad.add(new String[]{"cancel", id});
        }
        bad.add(new String[]{"read", "a.b", "c", "x"});
        bad.add(new String[]{"read", "--target", "nope", "d", "c", "x"});
        bad.add(new String[]{"read", "d", "c"});
        bad.add(new String[]{"--db", "a/b", "status"});
        bad.add(new String[]{"--db", "", "verify"});
        bad.add(new String[]{"--uri", "not a uri", "status"});
        bad.add(new String[]{"serve", "--port", "70000"});
        bad.add(new String[]{"serve", "--latency", "10s"});
        bad.add(new String[]{"demo", "--transfers", "-1"});
        bad.add(new String[]{"tx", "-", "<"});
        bad.add(new String[]{"tx", "-", "<   "});
        bad.add(new String[]{"tx", "-", "<[1]"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": 5}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [5]}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [{\"op\": \"insert\", \"db\": \"d\", \"coll\": \"c\", \"doc\": {\"_id\": {\"$gt\": \"\"}}}]}"});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": {\"$gt\": \"\"}, \"update\": {\"$set\": {\"a\": 1}}")});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": [1, 2], \"update\": {\"$set\": {\"a\": 1}}")});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": \"x\", \"update\": 5")});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": \"x\", \"update\": {\"$set\": {\"pendingTransactions\": 1}}")});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": \"x\", \"update\": {\"$rename\": {\"a\": \"b\"}}, \"colour\": 1")});
        bad.add(new String[]{"tx", "-", "<" + op("\"id\": \"x\", \"update\": {\"$set\": {\"a\": {\"$where\": \"1\"}}}")});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [{\"op\": \"inc\", \"db\": \"d\", \"coll\": \"c\", \"id\": \"x\", \"inc\": {\"n\": \"x\"}}]}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [{\"op\": \"insert\", \"target\": \"shop\", \"db\": \"d\", \"coll\": \"c\", \"doc\": {\"_id\": 1}}]}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [{\"op\": \"drop\", \"db\": \"d\", \"coll\": \"c\", \"id\": 1}]}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": [{\"op\": \"delete\", \"db\": \"a.b\", \"coll\": \"system.x\", \"id\": 1}]}"});
        bad.add(new String[]{"tx", "-", "<{\"ops\": []}"});
        bad.add(new String[]{"tx", "-", "<{'ops': []} // two"});
        bad.add(new String[]{"tx", file("dup.json", "{\"ops\": [], \"ops\": []}")});
        bad.add(new String[]{"tx", dir.resolve("missing.json").toString()});
        bad.add(new String[]{"tx", dir.toString()});
        bad.add(new String[]{"tx", file("t.json", "{\"ops\": []}"), "--target", "=x"});
        bad.add(new String[]{"tx", file("u.json", "{\"ops\": []}"), "--target", "shop=not a uri"});
        bad.add(new String[]{"tx"});
        badJson(bad);
        return bad;
    }

    /** Text that is not a transaction, of many kinds: broken JSON, bad extended JSON types, numbers out of range. */
    private void badJson(List<String[]> bad) throws IOException {
        String insert = "{\"ops\": [{\"op\": \"insert\", \"db\": \"d\", \"coll\": \"c\", \"doc\": {\"_id\": 1, \"x\": %s}}]}";
        String inc = "{\"ops\": [{\"op\": \"inc\", \"db\": \"d\", \"coll\": \"c\", \"id\": 1, \"inc\": {\"n\": %s}}]}";
        for (String text : List.of("{\"ops\": [ {\"op\": \"insert\"", "{\"ops\": [}", "{\"ops\": [1,]}", "{\"ops\": [] ",
                "{\"ops\": \"\u0001\"}", "\uFEFF{\"ops\": []}", "{\"ops\": [], }", "{ops: []}", "[\"ops\"]", "\"ops\"", "null", "5",
                "{\"ops\": [" + "[".repeat(1200) + "]".repeat(1200) + "]}",
                "{\"ops\": [{\"op\": \"insert\", \"db\": \"d\", \"coll\": \"c\", \"doc\": {\"_id\": " + "9".repeat(1200) + "}}]}")) {
            bad.add(new String[]{"tx", "-", "<" + text});
        }
        for (String value : List.of("{\"$numberDecimal\": \"abc\"}", "{\"$numberDecimal\": 5}", "{\"$oid\": \"zz\"}",
                "{\"$date\": \"yesterday\"}", "{\"$date\": {\"$numberLong\": \"x\"}}", "{\"$numberLong\": \"1.5\"}",
                "{\"$numberInt\": \"x\"}", "{\"$numberDouble\": \"lots\"}", "{\"$binary\": {\"base64\": \"!!\", \"subType\": \"00\"}}",
                "{\"$timestamp\": {\"t\": \"x\"}}", "{\"$uuid\": \"nope\"}", "{\"$symbol\": 1}", "{\"$minKey\": 2}",
                "{\"$undefined\": 5}", "{\"$code\": 5}", "{\"$dbPointer\": 1}")) {
            bad.add(new String[]{"tx", "-", "<" + String.format(insert, value)});
        }
        for (String amount : List.of("1e400", "{\"$numberDecimal\": \"NaN\"}", "{\"$numberDecimal\": \"Infinity\"}", "\"5\"", "true",
                "[1]", "{\"$numberDecimal\": \"1e9999\"}")) {
            bad.add(new String[]{"tx", "-", "<" + String.format(inc, amount)});
        }
        Path latin1 = dir.resolve("bytes.json");
        Files.write(latin1, new byte[]{'{', '"', 'o', (byte) 0xE9, '"', ':', '1', '}'});
        bad.add(new String[]{"tx", latin1.toString()});
    }

    @Test
    void everyCommand_badInput_answersInTheUsersWords_noJavaClassNameOrStackTrace() throws IOException {
        List<String> leaks = new ArrayList<>();
        int checked = 0;
        for (String[] command : badCommands()) {
            for (boolean json : new boolean[]{false, true}) {
                List<String> args = new ArrayList<>();
                String stdin = "";
                for (String arg : command) {
                    if (arg.startsWith("<")) {
                        stdin = arg.substring(1);
                    } else {
                        args.add(arg);
                    }
                }
                if (json) {
                    args.add("--json");
                }
                String input = stdin;
                CliRunner.Result r = withStdin(stdin, () -> cli.run(args.toArray(String[]::new)));
                checked++;
                String said = r.err() + (json ? r.out() : "");
                String line = String.join(" ", args) + (input.isEmpty() ? "" : " < "
                        + (input.length() > 150 ? input.substring(0, 150) + "..." : input));
                Matcher m = JAVA.matcher(said);
                if (m.find()) {
                    leaks.add(line + "\n  -> '" + m.group() + "' in: " + said.strip());
                }
                // an id that names no transaction is not found (4), as read's document; the rest is bad input (2)
                int expected = (command[0].equals("inspect") || command[0].equals("cancel")) && !command[1].isEmpty()
                        ? ExitCodes.NOT_FOUND : ExitCodes.BAD_INPUT;
                if (r.exitCode() != expected) {
                    leaks.add(line + "\n  -> exit " + r.exitCode() + ", not " + expected + ": " + said.strip());
                }
                if (r.err().isBlank()) {
                    leaks.add(line + "\n  -> nothing on stderr");
                }
            }
        }
        assertThat(checked).isGreaterThan(100);
        assertThat(leaks).as("messages that are not in the user's words").isEmpty();
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isZero();
    }

    @Test
    void unreachableServer_saysSoWithoutJava_exit1() {
        CliRunner.Result r = new CliRunner("--uri", "mongodb://127.0.0.1:1", "--db", mongo.database()).run("status");

        assertThat(r.exitCode()).isEqualTo(ExitCodes.NOT_OK);
        assertThat(r.err()).contains("cannot reach MongoDB at mongodb://127.0.0.1:1");
        assertThat(JAVA.matcher(r.err()).find()).as(r.err()).isFalse();
    }

    private static CliRunner.Result withStdin(String text, java.util.function.Supplier<CliRunner.Result> run) {
        InputStream saved = System.in;
        System.setIn(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
        try {
            return run.get();
        } finally {
            System.setIn(saved);
        }
    }
}
