package io.mongo2pc.cli;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Numbers as a user wrote them: amounts in plain decimal in every output (never {@code 1E-39}),
 * and a generic increment that would change a stored number's type or scale refused as bad input
 * unless the operation allows it.
 */
class NumbersCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final String TINY = "0." + "0".repeat(38) + "1";
    static final String TINY_ACCOUNT = "0." + "0".repeat(38) + "5";

    @TempDir
    Path dir;
    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
    }

    private MongoCollection<Document> stock() {
        return mongo.client().getDatabase(mongo.database()).getCollection("stock");
    }

    private String tx(String op) throws IOException {
        Path file = dir.resolve("tx.json");
        Files.writeString(file, "{\"ops\": [" + op + "]}");
        return file.toString();
    }

    @Test
    void amountsOf39DecimalPlaces_areShownInPlainDecimal_inEveryOutput() {
        List<CliRunner.Result> said = new ArrayList<>();
        said.add(cli.run("accounts", "create", "Y", TINY_ACCOUNT));
        said.add(cli.run("accounts", "create", "Z", "0." + "0".repeat(39)));
        said.add(cli.run("accounts", "create", "W", TINY_ACCOUNT, "--json"));
        said.add(cli.run("transfer", "Y", "Z", TINY));
        said.add(cli.run("transfer", "Y", "Z", TINY, "--json"));
        said.add(cli.run("transfer", "Z", "W", "1"));
        said.add(cli.run("accounts", "list"));
        said.add(cli.run("accounts", "list", "--json"));
        said.add(cli.run("transactions", "list"));
        said.add(cli.run("transactions", "list", "--json"));
        said.add(cli.run("read", mongo.database(), "accounts", "Y"));
        said.add(cli.run("read", mongo.database(), "accounts", "Y", "--json"));
        said.add(cli.run("verify", "--expect-total", "0." + "0".repeat(37) + "10"));

        String all = String.join("\n", said.stream().map(r -> r.out() + r.err()).toList());
        assertThat(all).doesNotContainPattern("\\dE[-+]?\\d"); // BigDecimal's exponent form (ids are lowercase hex)
        assertThat(said.get(0).out()).contains("with balance " + TINY_ACCOUNT);
        assertThat(said.get(3).out()).contains("done: " + TINY + " from Y to Z");
        assertThat(said.get(4).out()).contains("\"value\":" + TINY);
        assertThat(said.get(5).err()).contains("of 1 from Z to W");
        assertThat(said.get(6).out()).contains("Y                        0." + "0".repeat(38) + "3");
        assertThat(said.get(8).out()).contains("Y -> Z " + TINY);
        assertThat(said.get(11).out()).contains("\"balance\":0." + "0".repeat(38) + "3");
        assertThat(said.get(12).exitCode()).as(said.get(12).toString()).isZero();
    }

    @Test
    void genericInc_ofAFraction_onAnIntegerField_isBadInput_andChangesNothing() throws IOException {
        stock().insertOne(new Document("_id", "w").append("qty", 5));
        String op = "{\"op\": \"inc\", \"db\": \"" + mongo.database() + "\", \"coll\": \"stock\", \"id\": \"w\", \"inc\": {\"qty\": 1.5}";

        CliRunner.Result refused = cli.run("tx", tx(op + "}"), "--json");

        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(refused.json().get("error").asText()).contains("operation 0 on default/" + mongo.database() + ".stock/w")
                .contains("an increment of qty by 1.5 would turn the integer 5 into a double").contains("\"allowTypeChange\": true");
        assertThat(stock().find().first().get("qty")).isEqualTo(5);
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isZero();

        CliRunner.Result allowed = cli.run("tx", tx(op + ", \"allowTypeChange\": true}"), "--json");

        assertThat(allowed.exitCode()).as(allowed.toString()).isZero();
        assertThat(stock().find().first().get("qty")).isEqualTo(6.5);
    }

    @Test
    void genericInc_ofMorePlacesThanADecimalField_isBadInput_fewerAreFine() throws IOException {
        stock().insertOne(new Document("_id", "p").append("price", new Decimal128(new BigDecimal("10.00"))).append("n", 2L));
        String op = "{\"op\": \"inc\", \"db\": \"" + mongo.database() + "\", \"coll\": \"stock\", \"id\": \"p\", \"inc\": ";

        CliRunner.Result finer = cli.run("tx", tx(op + "{\"price\": {\"$numberDecimal\": \"0.001\"}}}"));
        CliRunner.Result update = cli.run("tx", tx("{\"op\": \"update\", \"db\": \"" + mongo.database()
                + "\", \"coll\": \"stock\", \"id\": \"p\", \"update\": {\"$inc\": {\"n\": {\"$numberDecimal\": \"1\"}}}}"));
        CliRunner.Result coarser = cli.run("tx", tx(op + "{\"price\": {\"$numberDecimal\": \"0.5\"}, \"n\": 3}}"));

        assertThat(finer.exitCode()).as(finer.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(finer.err()).contains("would give the decimal 10.00 (2 decimal places) 3 places");
        assertThat(update.exitCode()).as(update.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(update.err()).contains("would turn the integer 2 into a decimal");
        assertThat(coarser.exitCode()).as(coarser.toString()).isZero();
        assertThat(stock().find().first()).containsEntry("price", new Decimal128(new BigDecimal("10.50"))).containsEntry("n", 5L);
    }
}
