package io.mongo2pc.cli;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The states this console has seen each transaction in, with the stamp of each: a transaction's
 * history where known (the transaction document keeps only its present state). Bounded: the
 * least recently seen transactions are forgotten first. Thread-safe.
 */
final class ConsoleHistory {
    private static final int TRANSACTIONS = 10_000;

    record Seen(String state, Instant at) { }

    private final Map<Object, List<Seen>> seen = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, List<Seen>> eldest) {
            return size() > TRANSACTIONS;
        }
    };

    synchronized void saw(Object id, Object state, Instant at) {
        List<Seen> states = seen.computeIfAbsent(id, k -> new ArrayList<>());
        String text = String.valueOf(state);
        if (states.isEmpty() || !states.get(states.size() - 1).state().equals(text)) {
            states.add(new Seen(text, at));
        }
    }

    synchronized List<Seen> of(Object id) {
        return List.copyOf(seen.getOrDefault(id, List.of()));
    }
}
