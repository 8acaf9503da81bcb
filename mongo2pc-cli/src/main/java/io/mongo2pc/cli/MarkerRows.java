package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.bank.Bank;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The markers {@code status} counts (on accounts), each with the transaction it names as that
 * transaction stands now: for {@code status --markers} and for what {@code recover} did with each.
 */
final class MarkerRows {
    /** A marker and its transaction ({@code tx} empty: no transaction document has its id). */
    record Row(Bank.Marker marker, Optional<TransactionView> tx) {
        Object transaction() {
            return TransactionIds.printable(marker.transactionId());
        }

        /** The transaction's state as it counts, or null without a document. */
        Object state() {
            return tx.map(TransactionRows::stateText).orElse(null);
        }
    }

    private MarkerRows() { }

    /** Every marker on the accounts, with its transaction (each transaction read once). */
    static List<Row> read(Session session) {
        TransactionManager manager = session.manager();
        Map<Object, Optional<TransactionView>> seen = new HashMap<>();
        List<Row> rows = new ArrayList<>();
        for (Bank.Marker marker : session.bank().listMarkers()) {
            rows.add(new Row(marker, seen.computeIfAbsent(marker.transactionId(), manager::inspect)));
        }
        return rows;
    }

    /** {@code status --markers}: {@code [{"account","transaction","state","stale"}]}. */
    static ArrayNode json(List<Row> rows, Instant now, Duration leaseIfNone) {
        ArrayNode list = Json.object().arrayNode();
        for (Row row : rows) {
            ObjectNode node = list.addObject();
            node.set("account", Json.value(row.marker().account()));
            node.set("transaction", Json.value(row.transaction()));
            node.set("state", Json.value(row.state()));
            node.put("stale", row.tx().map(tx -> tx.isStale(now, leaseIfNone)).orElse(false));
        }
        return list;
    }

    /** "account A: transaction T, applied, stale: `mongo2pc recover` finishes it". */
    static String describe(Row row, Instant now, Duration leaseIfNone) {
        String head = "account " + row.marker().account() + ": transaction " + row.transaction();
        if (row.tx().isEmpty()) {
            return head + ", no transaction document (" + NO_DOCUMENT + ")";
        }
        TransactionView tx = row.tx().get();
        if (tx.isTerminal()) {
            return head + ", " + row.state() + ", its marker not removed yet (`mongo2pc recover` removes it)";
        }
        if (tx.state() == TransactionState.INITIAL) {
            return head + ", initial (queued: `mongo2pc worker` runs it)";
        }
        if (tx.isStale(now, leaseIfNone)) {
            return head + ", " + row.state() + ", stale: its owner's lease has run out (`mongo2pc recover` finishes it)";
        }
        Instant ends = tx.leaseEnds();
        return head + ", " + row.state() + (ends == null ? ", in flight" : ", its owner's lease runs until " + ends);
    }

    private static final String NO_DOCUMENT = "its owner stopped before writing it, or it was pruned; recovery undoes"
            + " a prepare without a document once the prepare's deadline has passed";

    /**
     * The markers of {@code before} after a recovery pass: each with its transaction read again,
     * and {@code left}, the markers still there.
     */
    record Pass(List<Row> markers, Set<Bank.Marker> left) {
        static Pass after(Session session, List<Row> before) {
            Set<Bank.Marker> left = new HashSet<>(session.bank().listMarkers());
            Map<Object, Optional<TransactionView>> now = new HashMap<>();
            List<Row> rows = new ArrayList<>();
            for (Row row : before) {
                rows.add(new Row(row.marker(), now.computeIfAbsent(row.marker().transactionId(), session.manager()::inspect)));
            }
            return new Pass(rows, left);
        }

        boolean removed(Row row) {
            return !left.contains(row.marker());
        }

        /** {@code [{"account","transaction","state","removed"}]}: {@code state} after the pass, null without a document. */
        ArrayNode json() {
            ArrayNode list = Json.object().arrayNode();
            for (Row row : markers) {
                ObjectNode node = list.addObject();
                node.set("account", Json.value(row.marker().account()));
                node.set("transaction", Json.value(row.transaction()));
                node.set("state", Json.value(row.state()));
                node.put("removed", removed(row));
            }
            return list;
        }

        /** One line per marker: removed (released or undone) or left, and why. */
        List<String> describe(RecoveryReport report) {
            Map<Object, Instant> notStale = new HashMap<>();
            report.notStale().forEach(waiting -> notStale.put(waiting.id(), waiting.leaseEnds()));
            List<String> lines = new ArrayList<>();
            for (Row row : markers) {
                String head = "marker of transaction " + row.transaction() + " on account " + row.marker().account() + ": ";
                Object txId = row.marker().transactionId();
                Optional<TransactionView> tx = row.tx();
                if (removed(row)) {
                    lines.add(head + (tx.isEmpty() ? "removed (no transaction document)"
                            : tx.get().isCommitted() ? "released (transaction " + row.state() + ")"
                            : tx.get().state() == TransactionState.CANCELED ? "undone (transaction canceled)"
                            : "removed (transaction " + row.state() + ")"));
                } else if (tx.isEmpty()) {
                    lines.add(head + "left: no transaction document (" + NO_DOCUMENT + ")");
                } else if (notStale.containsKey(txId)) {
                    lines.add(head + "left: transaction " + row.state() + ", its owner's lease runs until " + notStale.get(txId));
                } else if (tx.get().state() == TransactionState.INITIAL) {
                    lines.add(head + "left: queued (initial), `mongo2pc worker` runs it");
                } else if (tx.get().isTerminal()) {
                    lines.add(head + "left: transaction " + row.state() + ", yet its marker is still here; the next pass tries again");
                } else {
                    lines.add(head + "left: transaction " + row.state() + " (failed in this pass, changed since it began,"
                            + " or taken over by another process; the next pass tries again)");
                }
            }
            return lines;
        }
    }
}
