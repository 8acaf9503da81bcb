package io.mongo2pc.cli;

import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo tells the protocol as the README does: by default the commit point is the insert of
 * the transaction document already applied; the compare-and-set pending -> applied is the
 * tutorial's rules', which only its crash section follows.
 */
class DemoReadmeTest {
    private static final Path README = Path.of("..", "README.md");

    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void demo_namesTheDefaultCommitPointAsTheReadmeDoes() throws IOException {
        String readme = Files.readString(README);
        assertThat(readme).contains("the commit, which is the insert of the transaction document already `applied`");

        CliRunner.Result r = new CliRunner("--uri", mongo.uri(), "--db", mongo.database()).run("demo", "--transfers", "10");

        assertThat(r.exitCode()).as(r.toString()).isZero();
        String beforeCrashes = r.out().substring(0, r.out().indexOf("== 4."));
        String crashes = r.out().substring(r.out().indexOf("== 4."), r.out().indexOf("== 5."));
        assertThat(beforeCrashes).contains("the commit point is the insert of the transaction document already applied",
                "credits take effect after it").doesNotContain("the commit point is the single write pending -> applied");
        assertThat(crashes).contains("tutorial's rules", "pending -> applied");
        mongo.client().getDatabase(mongo.database() + "_demo").drop();
    }
}
