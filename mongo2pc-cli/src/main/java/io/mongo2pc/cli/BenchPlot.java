package io.mongo2pc.cli;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** Draws a bench run as a PNG: throughput per second above, p50 and p99 latency per second below. */
final class BenchPlot {
    private static final int WIDTH = 900;
    private static final int PANEL = 260;
    private static final int MARGIN = 60;

    private BenchPlot() { }

    /** {@code timeline} rows: {seconds, tps, p50 ms, p99 ms}. */
    static void draw(Path file, String title, List<double[]> timeline) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BufferedImage image = new BufferedImage(WIDTH, 2 * PANEL + 2 * MARGIN, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.setColor(Color.BLACK);
        g.drawString("mongo2pc bench: " + title, MARGIN, 25);
        double maxTime = timeline.isEmpty() ? 1 : Math.max(1, timeline.get(timeline.size() - 1)[0]);
        panel(g, MARGIN / 2 + 20, "transactions per second", maxTime, timeline, List.of(r -> r[1]), List.of(new Color(0x1f77b4)), List.of("tps"));
        panel(g, MARGIN / 2 + 40 + PANEL, "latency (ms)", maxTime, timeline, List.of(r -> r[2], r -> r[3]),
                List.of(new Color(0x2ca02c), new Color(0xd62728)), List.of("p50", "p99"));
        g.dispose();
        ImageIO.write(image, "png", file.toFile());
    }

    private static void panel(Graphics2D g, int top, String label, double maxTime, List<double[]> rows,
                              List<ToDoubleFunction<double[]>> series, List<Color> colors, List<String> names) {
        int left = MARGIN;
        int width = WIDTH - 2 * MARGIN;
        int height = PANEL - 40;
        double maxY = 1;
        for (double[] row : rows) {
            for (ToDoubleFunction<double[]> s : series) {
                maxY = Math.max(maxY, s.applyAsDouble(row));
            }
        }
        maxY *= 1.1;
        g.setColor(Color.LIGHT_GRAY);
        g.setStroke(new BasicStroke(1));
        for (int i = 0; i <= 4; i++) {
            int y = top + height - i * height / 4;
            g.drawLine(left, y, left + width, y);
            g.setColor(Color.DARK_GRAY);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            g.drawString(String.format("%.0f", maxY * i / 4), 5, y + 4);
            g.setColor(Color.LIGHT_GRAY);
        }
        g.setColor(Color.BLACK);
        g.drawRect(left, top, width, height);
        g.drawString(label + "   (x: seconds, 0 to " + String.format("%.0f", maxTime) + ")", left, top - 5);
        g.setStroke(new BasicStroke(2));
        for (int s = 0; s < series.size(); s++) {
            g.setColor(colors.get(s));
            g.drawString(names.get(s), left + width - 80 + 40 * s, top + 15);
            int px = -1;
            int py = -1;
            for (double[] row : rows) {
                int x = left + (int) (row[0] / maxTime * width);
                int y = top + height - (int) (series.get(s).applyAsDouble(row) / maxY * height);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                px = x;
                py = y;
            }
        }
    }
}
