package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;

import static org.assertj.core.api.Assertions.assertThat;

/** An amount with more decimal places than an account's scale is bad input (exit 2) and writes nothing. */
class AccountScaleCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    CliRunner cli;

    @BeforeEach
    void setUp() {
        cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
    }

    private Object balance(String id) {
        return mongo.client().getDatabase(mongo.database()).getCollection("accounts").find(new Document("_id", id)).first()
                .get("balance");
    }

    @Test
    void transfer_fractionOfAMinorUnit_exit2_nothingWritten_andTheMessageSaysWhy() {
        assertThat(cli.run("accounts", "create", "A", "1000").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "0").exitCode()).isZero();

        CliRunner.Result r = cli.run("transfer", "A", "B", "1.505");
        CliRunner.Result submitted = cli.run("submit", "A", "B", "1.5", "--json");

        assertThat(r.exitCode()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("amount 1.505 has 3 decimal places, but account A allows 0");
        assertThat(submitted.exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(submitted.json().get("error").asText()).contains("decimal place");
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("transactions").countDocuments()).isZero();
        assertThat(balance("A")).isEqualTo(1000L);
        mongo.invariants().expectTotal(mongo.database(), 1000L);
    }

    @Test
    void accountsCreatedWithCents_takeAmountsInCents() {
        assertThat(cli.run("accounts", "create", "A", "10.00").exitCode()).isZero();
        assertThat(cli.run("accounts", "create", "B", "0.00").exitCode()).isZero();

        CliRunner.Result r = cli.run("transfer", "A", "B", "1.5", "--json");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(balance("A")).isEqualTo(new Decimal128(new BigDecimal("8.50")));
        assertThat(cli.run("transfer", "A", "B", "0.001").exitCode()).isEqualTo(ExitCodes.BAD_INPUT);
        mongo.invariants().expectTotal(mongo.database(), new Decimal128(new BigDecimal("10.00")));
    }
}
