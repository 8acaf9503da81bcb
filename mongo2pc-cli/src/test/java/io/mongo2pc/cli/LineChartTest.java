package io.mongo2pc.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The charts of {@code bench --plot} and {@code scripts/bench-latency.sh}: round ticks, readable labels. */
class LineChartTest {
    @TempDir
    Path dir;

    @Test
    void ticks_areRoundValuesCoveringTheRange() {
        assertThat(LineChart.ticks(0, 4321)).containsExactly(0, 1000, 2000, 3000, 4000, 5000);
        assertThat(LineChart.ticks(0, 1)).containsExactly(0, 0.2, 0.4, 0.6, 0.8, 1);
        assertThat(LineChart.logTicks(150, 30_000)).containsExactly(100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000);
        assertThat(LineChart.label(2500)).isEqualTo("2,500");
        assertThat(LineChart.label(0.5)).isEqualTo("0.5");
    }

    @Test
    void latencyPlot_drawsThePointsOfAJsonLinesFile() throws Exception {
        Path in = dir.resolve("runs.jsonl");
        Files.write(in, List.of(
                "{\"addedLatencyMs\":0,\"finish\":\"inline\",\"mode\":\"raw\",\"threads\":16,\"tps\":30000.5}",
                "{\"addedLatencyMs\":1,\"finish\":\"inline\",\"mode\":\"raw\",\"threads\":16,\"tps\":15000}",
                "{\"addedLatencyMs\":0,\"finish\":\"background\",\"mode\":\"library\",\"threads\":16,\"tps\":5000}",
                "{\"addedLatencyMs\":1,\"finish\":\"background\",\"mode\":\"library\",\"threads\":16,\"tps\":2000}",
                "{\"addedLatencyMs\":1,\"finish\":\"inline\",\"mode\":\"library\",\"threads\":1,\"tps\":150}",
                "not json: skipped"));
        Path png = dir.resolve("plot.png");

        LatencyPlot.main(new String[]{in.toString(), png.toString()});

        assertThat(Files.size(png)).isGreaterThan(5_000);
    }
}
