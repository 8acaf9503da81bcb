package io.mongo2pc.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code serve --worker-threads} refuses a count it cannot run with, in the user's words. */
class ServeWorkerThreadsTest {

    @Test
    void serve_zeroOrAbsurdWorkerThreads_exit2_withAClearMessage() {
        CliRunner cli = new CliRunner();
        CliRunner.Result zero = cli.run("serve", "--in-memory", "--port", "0", "--worker-threads", "0");
        assertThat(zero.exitCode()).as(zero.toString()).isEqualTo(2);
        assertThat(zero.err()).contains("--worker-threads must be between 1 and 1024, got 0");

        CliRunner.Result absurd = cli.run("serve", "--in-memory", "--port", "0", "--worker-threads", "100000");
        assertThat(absurd.exitCode()).as(absurd.toString()).isEqualTo(2);
        assertThat(absurd.err()).contains("--worker-threads must be between 1 and 1024, got 100000");
    }
}
