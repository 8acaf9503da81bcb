package io.mongo2pc.cli;

import com.mongodb.client.MongoClient;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The README's Java examples compile exactly as written (imports included) against the built
 * modules, and run against a server: a newcomer can copy them.
 */
class ReadmeExamplesTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS_NAME = Pattern.compile("public class (\\w+)");

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @TempDir
    Path dir;

    @Test
    void readmeJavaBlocks_compileAsWritten_andRunAgainstAServer() throws Exception {
        List<String> classes = compileReadmeBlocks();
        assertThat(classes).contains("ShipOrder", "Transfers", "PayOrder");
        // The examples use the databases they name (mongo2pc, shop, bank), not a test's own: they run
        // on the embedded server only, never on a deployment of the user's (-Dmongo2pc.test.uri).
        assumeFalse(mongo.isExternal(), "the README's examples write to the databases they name");

        try (URLClassLoader loader = new URLClassLoader(new URL[]{dir.toUri().toURL()}, getClass().getClassLoader())) {
            String printed = printedBy(() -> loader.loadClass("Transfers").getMethod("main", String[].class)
                    .invoke(null, (Object) new String[]{mongo.uri()}));
            assertThat(printed).as("returned at the commit point (finishInBackground, the default)").contains("order-42 is applied");

            MongoClient client = mongo.client();
            client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", "o1").append("state", "UnPaid"));
            client.getDatabase("bank").getCollection("accounts").insertOne(new Document("_id", "A").append("balance", 100L)
                    .append("pendingTransactions", List.of()));
            Object order = loader.loadClass("PayOrder").getDeclaredMethod("pay", MongoClient.class, MongoClient.class)
                    .invoke(null, client, client);
            assertThat(((Optional<?>) order)).get().extracting(d -> ((Document) d).getString("state")).isEqualTo("Paid");
            assertThat(client.getDatabase("bank").getCollection("accounts").find().first().get("balance")).isEqualTo(70L);

            client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", "o2").append("status", "NEW"));
            client.getDatabase("shop").getCollection("carts").insertOne(new Document("_id", "c2").append("for", "o2"));
            Object shipped = loader.loadClass("ShipOrder").getDeclaredMethod("ship", MongoClient.class).invoke(null, client);
            assertThat(shipped).isEqualTo("paid");
            assertThat(client.getDatabase("shop").getCollection("orders").find(new Document("_id", "o2")).first().get("status"))
                    .isEqualTo("PAID");
            assertThat(client.getDatabase("shop").getCollection("shipments").find(new Document("_id", "s2")).first()).isNotNull();
            assertThat(client.getDatabase("shop").getCollection("carts").find(new Document("_id", "c2")).first()).isNull();
            Object again = loader.loadClass("ShipOrder").getDeclaredMethod("ship", MongoClient.class).invoke(null, client);
            assertThat(again).as("the same id run again: the first run's result, shipped once").isEqualTo("paid");
        }
    }

    private List<String> compileReadmeBlocks() throws Exception {
        Matcher block = JAVA_BLOCK.matcher(Files.readString(README));
        List<String> names = new ArrayList<>();
        List<String> files = new ArrayList<>();
        while (block.find()) {
            Matcher name = CLASS_NAME.matcher(block.group(1));
            assertThat(name.find()).as("a README Java block is a whole class:%n%s", block.group(1)).isTrue();
            Path source = dir.resolve(name.group(1) + ".java");
            Files.writeString(source, block.group(1));
            names.add(name.group(1));
            files.add(source.toString());
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("-d", dir.toString(), "-classpath", System.getProperty("java.class.path")));
        args.addAll(files);
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int exit = compiler.run(null, null, errors, args.toArray(String[]::new));
        assertThat(exit).as("javac on the README's examples:%n%s", errors.toString(StandardCharsets.UTF_8)).isZero();
        return names;
    }

    private interface Call {
        void run() throws Exception;
    }

    private static String printedBy(Call call) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            call.run();
        } finally {
            System.setOut(original);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
