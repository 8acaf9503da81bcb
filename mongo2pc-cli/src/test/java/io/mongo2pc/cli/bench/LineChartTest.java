package io.mongo2pc.cli.bench;

import io.mongo2pc.cli.Finish;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
    void ticks_stepByOneTwoOrFiveTimesAPowerOfTen_neverTwoAndAHalf() {
        assertThat(LineChart.ticks(0, 1230)).containsExactly(0, 500, 1000, 1500);
        for (double top : new double[]{0.7, 3, 4.3, 11, 1230, 47_000, 99_999}) {
            double[] ticks = LineChart.ticks(0, top);
            BigDecimal step = BigDecimal.valueOf(ticks[1]).subtract(BigDecimal.valueOf(ticks[0]));
            String digits = step.stripTrailingZeros().unscaledValue().toString();
            assertThat(digits).as("step %s of the ticks up to %s", step, top).isIn("1", "2", "5");
        }
    }

    @Test
    void benchPlot_timeAxisSaysWhereTheSecondsCountFrom() {
        for (LineChart.Panel panel : BenchPlot.panels(List.of(new double[]{1, 50, 2, 9, 12}))) {
            assertThat(panel.xLabel()).contains("seconds since the start of the measured run");
        }
    }

    @Test
    void benchPlot_titleNamesModeThreadsServerWarmupAndFinish() {
        String remote = BenchPlot.title("library", 16, 1000, "mongodb://db.example.net:27018/?w=majority", false,
                Duration.ofSeconds(3), Finish.background);
        assertThat(remote).contains("library", "16 threads", "1000 accounts", "server db.example.net:27018",
                "warm-up 3s", "finish background");
        String embedded = BenchPlot.title("raw", 1, 10, "mongodb://127.0.0.1:40111", true, Duration.ZERO, Finish.inline);
        assertThat(embedded).contains("raw", "1 thread", "server embedded", "warm-up 0s", "finish inline");
    }

    @Test
    void chart_longTitle_wrapsInsteadOfRunningOffTheImage() throws Exception {
        String title = BenchPlot.title("library (two-round commit)", 1024, 1_000_000, "mongodb://a-long-host-name.example.net:27018",
                false, Duration.ofMillis(2500), Finish.background);
        Path png = dir.resolve("title.png");
        LineChart.write(png, title, BenchPlot.panels(List.of(new double[]{1, 50, 2, 9, 12}, new double[]{2, 60, 3, 8, 11})));

        BufferedImage image = ImageIO.read(png.toFile());
        for (int y = 0; y < 35; y++) {
            for (int x = image.getWidth() - 20; x < image.getWidth(); x++) {
                assertThat(image.getRGB(x, y) & 0xffffff).as("title ink at %d,%d, at the image's right edge", x, y).isEqualTo(0xffffff);
            }
        }
        assertThat(LineChart.wrap(title, new java.awt.Font(java.awt.Font.SANS_SERIF, java.awt.Font.BOLD, 15), 795)).hasSizeGreaterThan(1);
    }

    @Test
    void chart_fillsTheImage_xAxisEndsAtTheLastPoint() throws Exception {
        List<double[]> points = new ArrayList<>();
        for (double x = 1.07; x < 4.3; x += 1.07) {
            points.add(new double[]{x, 40 + x});
        }
        points.add(new double[]{4.3, 44});
        Color red = new Color(0xff0000);
        Path png = dir.resolve("fill.png");
        LineChart.write(png, "title", List.of(new LineChart.Panel("p", "x", "y", List.of(new LineChart.Series("s", red, points, false)))));

        BufferedImage image = ImageIO.read(png.toFile());
        int redLeft = Integer.MAX_VALUE;
        int redRight = -1;
        int inkBottom = -1;
        int inkRight = -1;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y) & 0xffffff;
                if (rgb != 0xffffff) {
                    inkBottom = Math.max(inkBottom, y);
                    inkRight = Math.max(inkRight, x);
                }
                if (rgb == 0xff0000 && y > 30) { // the line, not its legend key on the title line
                    redLeft = Math.min(redLeft, x);
                    redRight = Math.max(redRight, x);
                }
            }
        }
        // x from 0 to 4.3: the last point sits on the right edge of the plot, the first a quarter in
        assertThat(redRight).as("the line's right end").isGreaterThan(image.getWidth() - 40);
        assertThat(redRight - redLeft).as("the line's width").isGreaterThan((int) (0.6 * image.getWidth()));
        assertThat(image.getHeight() - 1 - inkBottom).as("blank rows under the chart").isLessThan(25);
        assertThat(image.getWidth() - 1 - inkRight).as("blank columns right of the chart").isLessThan(40);
    }

    @Test
    void legendTooWideForTheTitleLine_goesUnderTheTitle_notOverItNorOffTheLeftEdge() throws Exception {
        // The legend of a latency plot of two clients, and one far wider than the panel.
        legendClearOfTitle(List.of("raw", "rules1: library", "rules1: library (background)", "rules2: library",
                "rules2: library (background)", "tutorial"));
        List<String> long6 = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            long6.add("a rather long name of series " + i);
        }
        legendClearOfTitle(long6);
    }

    private void legendClearOfTitle(List<String> names) throws Exception {
        int[] colors = {0xff0000, 0x00ff00, 0x0000ff, 0xff00ff, 0x00ffff, 0xffff00};
        List<LineChart.Series> series = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            series.add(new LineChart.Series(names.get(i), new Color(colors[i]), List.of(new double[]{0, 10 + i}, new double[]{1, 20 + i}), false));
        }
        Path png = dir.resolve("legend.png");
        LineChart.write(png, "title", List.of(new LineChart.Panel("16 threads", "x", "y", series)));

        BufferedImage image = ImageIO.read(png.toFile());
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y) & 0xffffff;
                for (int c : colors) {
                    // The panel's title sits at the left of its line, 40 px down (one title line above it).
                    boolean onTitle = y >= 38 && y < 54 && x < 180;
                    assertThat(rgb == c && (onTitle || x < 80)).as("a series' colour at " + x + "," + y + " (the panel's title, or left"
                            + " of the plot) with " + names).isFalse();
                }
            }
        }
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
