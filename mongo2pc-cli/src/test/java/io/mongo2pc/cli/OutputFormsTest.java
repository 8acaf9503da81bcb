package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.util.Date;

import static org.assertj.core.api.Assertions.assertThat;

/** Output that looks after itself: one form of a decimal in read's text and JSON; typed ids and dates in inspect --json. */
class OutputFormsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
    }

    @Test
    void read_textAndJson_showADecimal128TheSameWay() {
        mongo.client().getDatabase(mongo.database()).getCollection("things").insertOne(new Document("_id", "t")
                .append("amount", new Decimal128(new BigDecimal("795.240"))).append("ref", new ObjectId("0123456789abcdef01234567")));

        CliRunner.Result text = cli.run("read", mongo.database(), "things", "t");
        CliRunner.Result json = cli.run("read", mongo.database(), "things", "t", "--json");

        assertThat(text.out()).contains("\"amount\": 795.240").doesNotContain("$numberDecimal");
        assertThat(json.out()).contains("\"amount\":795.240").doesNotContain("$numberDecimal");
    }

    @Test
    void inspectJson_keepsIdsAndDatesTyped() {
        assertThat(cli.run("accounts", "create", "A", "10.00").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "0.00").exitCode()).isZero();
        String id = cli.run("transfer", "A", "B", "2.50", "--json").json().get("id").asText();

        JsonNode doc = cli.run("inspect", id, "--json").json();

        assertThat(doc.get("_id").get("$oid").asText()).isEqualTo(id);
        assertThat(doc.get("lastModified").has("$date")).as(doc.toString()).isTrue();
        assertThat(doc.get("value").decimalValue()).isEqualByComparingTo("2.5");
        assertThat(doc.get("state").asText()).isEqualTo("done");
        mongo.invariants().expectTotal(mongo.database(), new Decimal128(new BigDecimal("10.00")));
    }

    @Test
    void dateInAStoredDocument_isTypedInInspectText() {
        Document stored = new Document("_id", "x").append("at", new Date(0));
        assertThat(Json.extended(stored, false)).isEqualTo("{\"_id\": \"x\", \"at\": {\"$date\": \"1970-01-01T00:00:00Z\"}}");
    }
}
