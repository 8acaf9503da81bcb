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
            // Every reply leaves 20 ms after its request arrived: that much is exact. What scheduling
            // adds on a loaded machine is not (pings measured at 52 ms with the core shared eight
            // ways), so the upper bounds only catch a wrong unit or a wrong measure.
            double rtt = json.get("rttMs").asDouble();
            assertThat(rtt).isGreaterThanOrEqualTo(20.0).isLessThan(1_000.0);
            double p50 = json.get("p50Ms").asDouble();
            assertThat(p50).as("a transfer waits for at least one reply").isGreaterThanOrEqualTo(20.0);
            assertThat(json.get("p50RoundTrips").asDouble()).isCloseTo(p50 / rtt, within(0.01));
            // one update by _id per transfer: one round trip (measured 0.96 to 1.53 on that loaded machine)
            assertThat(json.get("p50RoundTrips").asDouble()).isBetween(0.5, 2.5);
            assertThat(r.err()).contains("a round trip to the server takes");
        }
    }
}
