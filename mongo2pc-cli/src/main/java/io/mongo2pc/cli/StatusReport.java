package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code status} and the console's {@code /api/status} report: transactions per state,
 * markers on accounts, and the open transaction that has waited longest (the recovery lag).
 */
record StatusReport(Map<TransactionState, Long> counts, long markers, Duration oldestOpen, Optional<TransactionView> oldest) {

    static StatusReport read(Session session) {
        return new StatusReport(session.manager().counts(), session.bank().markers(), session.manager().oldestOpen(),
                session.manager().oldestOpenTransaction());
    }

    /** The oldest open transaction's id as printed, or null when none is open. */
    Object oldestId() {
        return oldest.map(TransactionView::id).map(TransactionIds::printable).orElse(null);
    }

    BigDecimal oldestOpenSeconds() {
        return TransactionRows.seconds(oldestOpen);
    }

    /** {@code {"initial","pending","applied","done","canceling","canceled","markers","oldestOpenSeconds","oldestOpenId"}}. */
    ObjectNode json() {
        ObjectNode node = Json.object();
        for (TransactionState state : TransactionState.values()) {
            node.put(state.stored(), counts.getOrDefault(state, 0L));
        }
        node.put("markers", markers);
        node.put("oldestOpenSeconds", oldestOpenSeconds());
        node.set("oldestOpenId", Json.value(oldestId()));
        return node;
    }

    List<String> lines() {
        StringBuilder line = new StringBuilder("transactions:");
        for (TransactionState state : TransactionState.values()) {
            line.append(' ').append(state.stored()).append('=').append(counts.getOrDefault(state, 0L));
        }
        return List.of(line.toString(), "markers on accounts: " + markers,
                "oldest open transaction: " + (oldest.isEmpty() ? "none" : oldestId() + ", " + oldest.get().state().stored()
                        + ", last changed " + oldestOpenSeconds().toPlainString() + "s ago"));
    }
}
