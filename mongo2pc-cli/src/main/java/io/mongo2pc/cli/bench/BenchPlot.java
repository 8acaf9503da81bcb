package io.mongo2pc.cli.bench;

import com.mongodb.ConnectionString;
import io.mongo2pc.cli.Finish;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Draws a bench run as a PNG: throughput per second above, p50, p99 and p99.9 latency per second below. */
final class BenchPlot {

    /** The label of the time axis of both charts. */
    static final String TIME_AXIS = "seconds since the start of the measured run (after the warm-up)";

    private BenchPlot() { }

    /** {@code timeline} rows: {seconds, tps, p50 ms, p99 ms, p99.9 ms}. */
    static void draw(Path file, String title, List<double[]> timeline) throws IOException {
        LineChart.write(file, title, panels(timeline));
    }

    /** Throughput above, p50, p99 and p99.9 latency below (a stall shows in the tail first), both against {@link #TIME_AXIS}. */
    static List<LineChart.Panel> panels(List<double[]> timeline) {
        LineChart.Panel throughput = new LineChart.Panel("throughput", TIME_AXIS, "transactions per second",
                List.of(series("tps", 0, timeline, 1)));
        LineChart.Panel latency = new LineChart.Panel("latency", TIME_AXIS, "milliseconds",
                List.of(series("p50", 2, timeline, 2), series("p99", 1, timeline, 3), series("p99.9", 3, timeline, 4)));
        return List.of(throughput, latency);
    }

    /**
     * The chart's title: what ran ({@code mode}, e.g. "library (two-round commit)"), with how many
     * threads and accounts, against which server (the URI's hosts, or "embedded" for a server
     * started in this process), after how long a warm-up and with which finish.
     */
    static String title(String mode, int threads, int accounts, String uri, boolean embedded, Duration warmup, Finish finish) {
        String server = embedded || uri == null ? "embedded" : String.join(",", new ConnectionString(uri).getHosts());
        return String.format(java.util.Locale.ROOT, "mongo2pc bench: %s, %d %s, %d accounts, finish %s, warm-up %ss, server %s",
                mode, threads, threads == 1 ? "thread" : "threads", accounts, finish, LineChart.label(warmup.toMillis() / 1000.0),
                server);
    }

    private static LineChart.Series series(String name, int color, List<double[]> rows, int column) {
        List<double[]> points = new ArrayList<>(rows.size());
        for (double[] row : rows) {
            points.add(new double[]{row[0], row[column]});
        }
        return new LineChart.Series(name, LineChart.PALETTE.get(color), points, false);
    }
}
