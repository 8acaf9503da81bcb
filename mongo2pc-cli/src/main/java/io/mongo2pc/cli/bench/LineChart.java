package io.mongo2pc.cli.bench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A PNG of line charts stacked one above the other, each with rounded ticks (1, 2 or 5 times a power
 * of ten) on both axes, axis labels and a legend on its title line (in rows under the title when it
 * does not fit beside it); the x axis spans the data and no more, so the chart fills the image.
 * Drawn with AWT (headless), no plotting library needed.
 */
final class LineChart {
    /** Colours for series in the order given. */
    static final List<Color> PALETTE = List.of(new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0x17becf), new Color(0x7f7f7f),
            new Color(0xbcbd22), new Color(0xe377c2), new Color(0x393b79), new Color(0x637939));

    private static final int WIDTH = 900;
    /** Height of one chart: its title line, plot and x labels. */
    private static final int PANEL = 300;
    /** Room left of the plot for the y label and tick values. */
    private static final int LEFT = 80;
    /** Room right of the plot for the last x tick's text. */
    private static final int RIGHT = 25;
    private static final int TOP = 40;

    /** One line: its name in the legend, its colour, its points {x, y} in order of x, dots on them, dashes. */
    record Series(String name, Color color, List<double[]> points, boolean marked, boolean dashed) {
        Series(String name, Color color, List<double[]> points, boolean marked) {
            this(name, color, points, marked, false);
        }
    }

    /** One chart: its title above it, the label of each axis, its lines, and whether y is on a log scale. */
    record Panel(String title, String xLabel, String yLabel, List<Series> series, boolean logY) {
        Panel(String title, String xLabel, String yLabel, List<Series> series) {
            this(title, xLabel, yLabel, series, false);
        }
    }

    private LineChart() { }

    static void write(Path file, String title, List<Panel> panels) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Font titleFont = new Font(Font.SANS_SERIF, Font.BOLD, 15);
        List<String> titleLines = wrap(title, titleFont, WIDTH - LEFT - RIGHT);
        int top = TOP + (titleLines.size() - 1) * 20;
        BufferedImage image = new BufferedImage(WIDTH, top + panels.size() * PANEL + 8, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(titleFont);
        for (int i = 0; i < titleLines.size(); i++) {
            g.drawString(titleLines.get(i), LEFT, 25 + i * 20);
        }
        for (int i = 0; i < panels.size(); i++) {
            draw(g, top + i * PANEL, panels.get(i));
        }
        g.dispose();
        ImageIO.write(image, "png", file.toFile());
    }

    /** {@code text} in lines no wider than {@code width}, broken after commas where it must be. */
    static List<String> wrap(String text, Font font, int width) {
        FontMetrics fm = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB).createGraphics().getFontMetrics(font);
        List<String> lines = new ArrayList<>();
        String line = "";
        for (String part : text.split("(?<=, )")) {
            if (!line.isEmpty() && fm.stringWidth((line + part).stripTrailing()) > width) {
                lines.add(line.stripTrailing());
                line = "";
            }
            line += part;
        }
        lines.add(line.stripTrailing());
        return lines;
    }

    private static void draw(Graphics2D g, int top, Panel panel) {
        int width = WIDTH - LEFT - RIGHT;
        // The legend: right of the title if it fits there, else in rows under it, above the plot.
        FontMetrics legendFm = g.getFontMetrics(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        int titleEnd = LEFT + g.getFontMetrics(new Font(Font.SANS_SERIF, Font.BOLD, 13)).stringWidth(panel.title()) + 20;
        int keys = panel.series().size();
        int[] keyX = new int[keys];
        int[] keyRow = new int[keys];
        int total = 0;
        for (Series s : panel.series()) {
            total += 40 + legendFm.stringWidth(s.name());
        }
        boolean beside = LEFT + width - total >= titleEnd;
        int rows = beside ? 0 : 1;
        int kx = beside ? LEFT + width - total : LEFT;
        for (int i = 0; i < keys; i++) {
            int w = 40 + legendFm.stringWidth(panel.series().get(i).name());
            if (!beside && kx > LEFT && kx + w > LEFT + width) {
                rows++;
                kx = LEFT;
            }
            keyX[i] = kx;
            keyRow[i] = rows;
            kx += w;
        }
        int plotTop = top + 20 + rows * 16;
        int height = PANEL - 60 - rows * 16;
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        double maxY = 0;
        double minY = Double.MAX_VALUE;
        for (Series s : panel.series()) {
            for (double[] p : s.points()) {
                minX = Math.min(minX, p[0]);
                maxX = Math.max(maxX, p[0]);
                maxY = Math.max(maxY, p[1]);
                minY = Math.min(minY, p[1]);
            }
        }
        if (minX > maxX) {
            minX = 0;
            maxX = 1;
        }
        // the x axis ends where the data ends (no blank strip after the last point), ticks inside it
        double x0 = Math.min(0, minX);
        double x1 = maxX > x0 ? maxX : x0 + 1;
        double[] xTicks = within(ticks(x0, x1), x0, x1);
        double[] yTicks = panel.logY() ? logTicks(minY, maxY) : ticks(0, maxY);
        Scale yScale = new Scale(yTicks[0], yTicks[yTicks.length - 1], panel.logY(), plotTop + height, height);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.setColor(Color.BLACK);
        g.drawString(panel.title(), LEFT, top + 10);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (double t : yTicks) {
            int y = yScale.of(t);
            g.setColor(new Color(0xdddddd));
            g.drawLine(LEFT, y, LEFT + width, y);
            g.setColor(Color.DARK_GRAY);
            String text = label(t);
            g.drawString(text, LEFT - 6 - fm.stringWidth(text), y + 4);
        }
        for (double t : xTicks) {
            int x = LEFT + (int) Math.round((t - x0) / (x1 - x0) * width);
            g.setColor(new Color(0xeeeeee));
            g.drawLine(x, plotTop, x, plotTop + height);
            g.setColor(Color.DARK_GRAY);
            String text = label(t);
            g.drawString(text, x - fm.stringWidth(text) / 2, plotTop + height + 15);
        }
        g.setColor(Color.BLACK);
        g.drawRect(LEFT, plotTop, width, height);
        g.drawString(panel.xLabel(), LEFT + width / 2 - fm.stringWidth(panel.xLabel()) / 2, plotTop + height + 32);
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.rotate(-Math.PI / 2);
        rotated.drawString(panel.yLabel(), -(plotTop + height / 2 + fm.stringWidth(panel.yLabel()) / 2), 16);
        rotated.dispose();
        for (int i = 0; i < keys; i++) {
            Series s = panel.series().get(i);
            g.setColor(s.color());
            g.setStroke(s.dashed()
                    ? new BasicStroke(2, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[]{7, 5}, 0)
                    : new BasicStroke(2));
            int px = -1;
            int py = -1;
            for (double[] p : s.points()) {
                int x = LEFT + (int) Math.round((p[0] - x0) / (x1 - x0) * width);
                int y = yScale.of(p[1]);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                if (s.marked()) {
                    g.fillOval(x - 4, y - 4, 8, 8);
                }
                px = x;
                py = y;
            }
            int keyY = top + 6 + keyRow[i] * 16;
            g.drawLine(keyX[i], keyY, keyX[i] + 24, keyY);
            g.setColor(Color.BLACK);
            g.drawString(s.name(), keyX[i] + 30, keyY + 4);
        }
        g.setStroke(new BasicStroke(1));
    }

    /** Where a value goes on the y axis: linear, or by its logarithm. */
    private record Scale(double low, double high, boolean log, int bottom, int height) {
        int of(double v) {
            double f = log ? (Math.log10(Math.max(v, low)) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))
                    : (v - low) / (high - low);
            return bottom - (int) Math.round(f * height);
        }
    }

    /** 1, 2 and 5 times powers of ten, from the last at or below {@code from} to the first at or above {@code to}. */
    static double[] logTicks(double from, double to) {
        from = Math.max(from, 1e-9);
        to = Math.max(to, from * 1.0001);
        List<Double> ticks = new ArrayList<>();
        for (double power = Math.pow(10, Math.floor(Math.log10(from))); ticks.isEmpty() || ticks.get(ticks.size() - 1) < to; power *= 10) {
            for (double m : new double[]{1, 2, 5}) {
                double t = m * power;
                if (t <= from) {
                    ticks.clear(); // only the last one at or below from stays
                }
                if (ticks.isEmpty() || ticks.get(ticks.size() - 1) < to) {
                    ticks.add(t);
                }
            }
        }
        return ticks.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** The ticks from {@code low} to {@code high}, ends included (a rounding error short of them counts as in). */
    static double[] within(double[] ticks, double low, double high) {
        double slack = (high - low) * 1e-9;
        return java.util.Arrays.stream(ticks).filter(t -> t >= low - slack && t <= high + slack).toArray();
    }

    /** Evenly spaced round values (1, 2 or 5 times a power of ten) from at most {@code from} to at least {@code to}. */
    static double[] ticks(double from, double to) {
        if (to <= from) {
            to = from + 1;
        }
        double raw = (to - from) / 5;
        double power = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = power * 10;
        for (double m : new double[]{1, 2, 5, 10}) {
            if (m * power >= raw) {
                step = m * power;
                break;
            }
        }
        // multiples of the step in decimal, so that 3 x 0.2 is 0.6
        java.math.BigDecimal exact = java.math.BigDecimal.valueOf(step);
        List<Double> ticks = new ArrayList<>();
        for (long i = (long) Math.floor(from / step); ticks.isEmpty() || ticks.get(ticks.size() - 1) < to; i++) {
            ticks.add(exact.multiply(java.math.BigDecimal.valueOf(i)).doubleValue());
        }
        return ticks.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** A tick's text: whole numbers with thousands separators, else up to two decimals. */
    static String label(double value) {
        if (Math.abs(value - Math.rint(value)) < 1e-9) {
            return String.format(Locale.ROOT, "%,d", Math.round(value));
        }
        return String.format(Locale.ROOT, "%.2f", value).replaceAll("0+$", "");
    }
}
