package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mongo2pc.embedded.EmbeddedServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@code serve --latency} refuses what it cannot stand for; {@code bench} reports the round trip it ran over. */
class LatencyCommandsTest {

    @Test
    void serve_negativeOrAbsurdLatency_exit2_withAClearMessage() {
        CliRunner cli = new CliRunner();
        CliRunner.Result negative = cli.run("serve", "--in-memory", "--port", "0", "--latency", "-1ms");
        assertThat(negative.exitCode()).as(negative.toString()).isEqualTo(2);
        assertThat(negative.err()).contains("'-1ms' is negative");

        CliRunner.Result absurd = cli.run("serve", "--in-memory", "--port", "0", "--latency", "1h");
        assertThat(absurd.exitCode()).as(absurd.toString()).isEqualTo(2);
        assertThat(absurd.err()).contains("--latency must be at most 5s", "got 1h");

        CliRunner.Result notADuration = cli.run("serve", "--in-memory", "--port", "0", "--latency", "fast");
        assertThat(notADuration.exitCode()).as(notADuration.toString()).isEqualTo(2);
        assertThat(notADuration.err()).contains("'fast' is not a duration");
    }

    @Test
    void bench_overAServerWithLatency_reportsItsRoundTrip_andP50InRoundTrips() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().withLatency(Duration.ofMillis(20)).start()) {
            CliRunner.Result r = new CliRunner("--uri", server.uri(), "--db", "rtt")
                    .run("bench", "--mode", "raw", "--accounts", "10", "--threads", "2", "--transfers", "40", "--json");

            assertThat(r.exitCode()).as(r.toString()).isZero();
            JsonNode json = r.json();
            assertThat(json.get("rttMs").asDouble()).isBetween(20.0, 50.0);
            double p50 = json.get("p50Ms").asDouble();
            assertThat(json.get("p50RoundTrips").asDouble()).isCloseTo(p50 / json.get("rttMs").asDouble(), within(0.01));
            // one update by _id per operation: one round trip
            assertThat(json.get("p50RoundTrips").asDouble()).isBetween(0.9, 2.0);
            assertThat(r.err()).contains("a round trip to the server takes");
        }
    }
}
