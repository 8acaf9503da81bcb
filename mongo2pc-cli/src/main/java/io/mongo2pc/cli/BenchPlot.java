package io.mongo2pc.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Draws a bench run as a PNG: throughput per second above, p50 and p99 latency per second below. */
final class BenchPlot {

    private BenchPlot() { }

    /** {@code timeline} rows: {seconds, tps, p50 ms, p99 ms}. */
    static void draw(Path file, String title, List<double[]> timeline) throws IOException {
        LineChart.Panel throughput = new LineChart.Panel("throughput", "seconds", "transactions per second",
                List.of(series("tps", 0, timeline, 1)));
        LineChart.Panel latency = new LineChart.Panel("latency", "seconds", "milliseconds",
                List.of(series("p50", 2, timeline, 2), series("p99", 1, timeline, 3)));
        LineChart.write(file, "mongo2pc bench: " + title, List.of(throughput, latency));
    }

    private static LineChart.Series series(String name, int color, List<double[]> rows, int column) {
        List<double[]> points = new ArrayList<>(rows.size());
        for (double[] row : rows) {
            points.add(new double[]{row[0], row[column]});
        }
        return new LineChart.Series(name, LineChart.PALETTE.get(color), points, false);
    }
}
