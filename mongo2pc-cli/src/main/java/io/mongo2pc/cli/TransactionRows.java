package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.Values;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A page of the transaction list as {@code transactions list --json} and the console's
 * {@code /api/transactions} print it, and as a table for people.
 */
final class TransactionRows {
    private TransactionRows() { }

    /**
     * {@code {"transactions":[{"id","state","age","owner","application","epoch","reason","code","source",
     * "destination","value","stale"}],"more","next","total"}} ({@code total}: how many match, every page),
     * and {@code "lateCommit": true} on a row shown
     * canceled because its commit was written after its deadline; {@code leaseIfNone} judges whether one stored
     * without a lease of its own is stale.
     */
    static ObjectNode json(TransactionPage page, Duration leaseIfNone, long total) {
        ObjectNode root = Json.object();
        ArrayNode list = root.putArray("transactions");
        for (TransactionView tx : page.transactions()) {
            list.add(row(tx, page.age(tx), tx.isStale(page.asOf(), leaseIfNone)));
        }
        root.put("more", page.more());
        root.put("next", page.next());
        root.put("total", total);
        return root;
    }

    /**
     * A time as typed for {@code option}: an ISO-8601 instant ({@code 2024-01-31T12:00:00Z}) or a
     * DURATION ago ({@code 1h}); the answer turns the server's time now into that time. Refuses
     * anything else as bad input, before any read.
     */
    static java.util.function.UnaryOperator<java.time.Instant> time(String option, String text) {
        String trimmed = text == null ? "" : text.trim();
        try {
            java.time.Instant at = java.time.Instant.parse(trimmed);
            return now -> at;
        } catch (java.time.format.DateTimeParseException notAnInstant) {
            try {
                Duration ago = DurationConverter.parse(trimmed);
                return now -> now.minus(ago);
            } catch (RuntimeException notADuration) {
                throw CliException.badInput(option + " '" + text + "' is neither a time (2024-01-31T12:00:00Z) nor a duration ago"
                        + " (30s, 5m, 1h, 2d)");
            }
        }
    }

    /** One transaction of the list: {@code age} in seconds since its last change, null if never stamped. */
    static ObjectNode row(TransactionView tx, Duration age, boolean stale) {
        ObjectNode node = Json.object();
        node.set("id", Json.value(tx.id()));
        node.set("state", Json.value(stateText(tx)));
        node.put("age", age == null ? null : seconds(age));
        node.put("owner", tx.owner());
        node.put("application", tx.application());
        node.put("epoch", tx.epoch());
        node.put("reason", tx.reason());
        node.put("code", tx.reasonCode() == null ? null : tx.reasonCode().name());
        node.set("source", Json.value(tx.document().get("source")));
        node.set("destination", Json.value(tx.document().get("destination")));
        node.set("value", Json.value(tx.document().get("value")));
        node.put("stale", stale);
        if (tx.failedOperation() != null) {
            node.set("failedOperation", Json.failedOperation(tx.failedOperation()));
        }
        if (tx.lateCommit()) {
            node.put("lateCommit", true); // shown canceled: its commit was written after its deadline
        }
        return node;
    }

    /**
     * The state as it counts: as stored, but canceled for a commit written after its deadline (see
     * {@link TransactionView#lateCommit}); a state mongo2pc does not know is shown as it is.
     */
    static Object stateText(TransactionView tx) {
        return tx.state() != null ? tx.state().stored() : tx.document().get("state");
    }

    static BigDecimal seconds(Duration d) {
        return BigDecimal.valueOf(d.toMillis()).movePointLeft(3).setScale(3, RoundingMode.UNNECESSARY);
    }

    /** A table for people: id, state, age, owner, application, epoch, and the reason or the transfer. */
    static List<String> table(TransactionPage page, Duration leaseIfNone) {
        List<String[]> rows = new java.util.ArrayList<>();
        rows.add(new String[] {"ID", "STATE", "AGE", "OWNER", "APPLICATION", "EPOCH", "DETAIL"});
        for (TransactionView tx : page.transactions()) {
            String state = String.valueOf(stateText(tx)) + (tx.isStale(page.asOf(), leaseIfNone) ? " (stale)" : "");
            Object source = tx.document().get("source");
            String detail = tx.reason() != null ? (tx.reasonCode() == null ? "" : tx.reasonCode() + ": ") + tx.reason()
                    : source != null ? source + " -> " + tx.document().get("destination") + " " + Values.plain(tx.document().get("value"))
                    : tx.operations().size() + " operation(s)";
            rows.add(new String[] {String.valueOf(TransactionIds.printable(tx.id())), state, age(page.age(tx)),
                    dash(tx.owner()), dash(tx.application()), String.valueOf(tx.epoch()), oneLine(detail)});
        }
        int[] widths = new int[7];
        for (String[] row : rows) {
            for (int i = 0; i < 6; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        List<String> lines = new java.util.ArrayList<>();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < 6; i++) {
                line.append(String.format(Locale.ROOT, "%-" + widths[i] + "s  ", row[i]));
            }
            lines.add(line.append(row[6]).toString().stripTrailing());
        }
        return lines;
    }

    /** An age for people: {@code 4.2s}, {@code 3m05s}, {@code 2h07m}, {@code 3d04h}; {@code -} if unknown. */
    static String age(Duration d) {
        if (d == null) {
            return "-";
        }
        long s = d.getSeconds();
        if (s < 60) {
            return seconds(d).setScale(1, RoundingMode.DOWN).toPlainString() + "s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        if (s < 86400) {
            return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60);
        }
        return String.format(Locale.ROOT, "%dd%02dh", s / 86400, s % 86400 / 3600);
    }

    /** Reads a state as typed: any of its spellings, in any case. */
    static TransactionState state(String text) {
        return TransactionState.parse(text == null ? null : text.trim()).orElseThrow(() -> CliException.badInput(
                "unknown state '" + text + "': use initial, pending, applied, done, canceling or canceled"));
    }

    private static String dash(String s) {
        return s == null ? "-" : s;
    }

    private static String oneLine(String s) {
        String line = s.replaceAll("\\s+", " ");
        return line.length() > 100 ? line.substring(0, 97) + "..." : line;
    }
}
