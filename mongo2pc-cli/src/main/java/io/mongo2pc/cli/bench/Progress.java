package io.mongo2pc.cli.bench;

import java.io.PrintWriter;
import java.time.Duration;

/** A progress bar on a terminal; a line every few seconds otherwise. Both on stderr. */
final class Progress {
    private final PrintWriter err;
    private final Duration runFor;
    private final Long transfers;
    private final boolean terminal = System.console() != null;
    private double lastLine;

    Progress(PrintWriter err, Duration runFor, Long transfers) {
        this.err = err;
        this.runFor = runFor;
        this.transfers = transfers;
    }

    void show(double seconds, long operations, double tps) {
        double fraction = runFor != null ? seconds / (runFor.toMillis() / 1000.0) : (double) operations / transfers;
        fraction = Math.min(1, fraction);
        if (terminal) {
            int filled = (int) (fraction * 30);
            err.printf("\r[%s%s] %3.0f%%  %d ops  %.0f tps ", "#".repeat(filled), " ".repeat(30 - filled), fraction * 100, operations, tps);
            err.flush();
        } else if (seconds - lastLine >= 5) {
            err.printf("bench: %.0fs, %d ops, %.0f tps (%.0f%%)%n", seconds, operations, tps, fraction * 100);
            err.flush();
            lastLine = seconds;
        }
    }

    void done() {
        if (terminal) {
            err.println();
            err.flush();
        }
    }
}
