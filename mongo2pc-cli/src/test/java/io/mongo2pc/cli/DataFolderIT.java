package io.mongo2pc.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.mongo2pc.cli.ProcessHarness.Result;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Run in a folder without data, a command that only reads or acts on existing data creates none:
 * it says there is no data here, where it looked, and how to point at one (exit 2). Every command
 * says first which server and data folder it used. Runs the packaged jar in a folder of its own.
 */
class DataFolderIT {
    @TempDir
    Path dir;

    private ProcessHarness harness;
    private Path elsewhere;

    @BeforeEach
    void setUp() throws IOException {
        harness = new ProcessHarness(dir);
        elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        harness.close();
    }

    private Result run(String... args) throws IOException, InterruptedException {
        return harness.start(elsewhere, args).await(Duration.ofSeconds(60));
    }

    @Test
    void commandsThatOnlyReadOrAct_inAFolderWithoutData_createNone_andSayWhereTheyLooked() throws Exception {
        Path data = elsewhere.resolve("mongo2pc-data").toAbsolutePath().normalize();
        List<String[]> readers = List.of(
                new String[] {"status"}, new String[] {"status", "--json"}, new String[] {"verify"},
                new String[] {"accounts", "list"}, new String[] {"transactions", "list"}, new String[] {"recover"},
                new String[] {"inspect", "t-1"}, new String[] {"cancel", "t-1"}, new String[] {"read", "mongo2pc", "accounts", "A"},
                new String[] {"transfer", "A", "B", "1"}, new String[] {"submit", "A", "B", "1"});
        for (String[] command : readers) {
            Result r = run(command);

            assertThat(r.exitCode()).as(String.join(" ", command) + ": " + r).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err()).as(String.join(" ", command)).contains("no data here", data.toString(), "--uri",
                    "mongo2pc serve --data DIR").doesNotContain("Exception");
            assertThat(data).as("created by " + String.join(" ", command)).doesNotExist();
        }
        assertThat(run("status", "--json").json().get("error").asText()).contains("no data here");
    }

    @Test
    void everyCommand_saysWhichServerAndDataFolderItUsed() throws Exception {
        Path data = elsewhere.resolve("mongo2pc-data").toAbsolutePath().normalize();

        Result created = run("accounts", "create", "A", "10");
        Result status = run("status");
        Result json = run("status", "--json");

        assertThat(created.exitCode()).as(created.toString()).isZero();
        assertThat(data).as("accounts create starts new data here").isDirectory();
        assertThat(created.err().lines().findFirst().orElse("")).isEqualTo("mongo2pc accounts create: embedded server on "
                + data + " (started for this command), database mongo2pc");
        assertThat(status.err().lines().findFirst().orElse("")).startsWith("mongo2pc status: embedded server on " + data);
        assertThat(json.json().get("server").asText()).isEqualTo("embedded");
        assertThat(json.json().get("data").asText()).isEqualTo(data.toString());
    }
}
