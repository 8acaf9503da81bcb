package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** "Not found" is one exit code (4) for {@code inspect}, {@code read} and {@code cancel}, as the CLI contract says. */
class NotFoundCommandsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void notFound_isOneExitCode_forInspectReadAndCancel() {
        // given a transaction id and a document that do not exist
        CliRunner cli = new CliRunner("--uri", mongo.uri(), "--db", mongo.database());
        String unknown = new ObjectId().toHexString();

        // when each command looks for them
        CliRunner.Result inspect = cli.run("inspect", unknown, "--json");
        CliRunner.Result read = cli.run("read", mongo.database(), "accounts", "nobody", "--json");
        CliRunner.Result cancel = cli.run("cancel", unknown, "--json");

        // then each says so with the one exit code of not found

        assertThat(List.of(inspect.exitCode(), read.exitCode(), cancel.exitCode())).containsOnly(ExitCodes.NOT_FOUND).first()
                .isEqualTo(4);
        assertThat(inspect.json().get("error").asText()).contains("no transaction with id " + unknown);
        assertThat(cancel.json().get("error").asText()).contains("no transaction with id " + unknown);
        assertThat(read.json().get("error").asText()).contains("no document nobody");
    }
}
