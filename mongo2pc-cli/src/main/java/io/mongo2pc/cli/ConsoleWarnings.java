package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import io.mongo2pc.bank.Bank;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What an operator should look at, found each round: queued transactions no worker has claimed for
 * longer than the lease, open transactions whose owner's lease has run out (stale), and markers on
 * accounts that name no open transaction for longer than {@value #ORPHAN_SECONDS} seconds (a
 * prepare's marker names a transaction whose document is written a moment later, so only one that
 * stays counts). Thread-safe: one sampler thread reads, the answers are immutable.
 */
final class ConsoleWarnings {
    static final long ORPHAN_SECONDS = 10;
    private static final int SHOWN = 5;
    /** The most marker transactions looked up in one round. */
    private static final int LOOKUPS = 100;

    /** One warning: what kind, how many, in words, and the first few transaction ids. */
    record Warning(String kind, long count, String message, List<Object> ids) { }

    private final Session session;
    private final Duration lease;
    /** Marker transaction ids seen naming no open transaction, with when first seen so. */
    private final Map<Object, Instant> orphanSince = new HashMap<>();

    ConsoleWarnings(Session session, Duration lease) {
        this.session = session;
        this.lease = lease;
    }

    List<Warning> read(Instant now) {
        TransactionManager tm = session.manager();
        List<Warning> found = new ArrayList<>();
        TransactionQuery waiting = TransactionQuery.builder().state(TransactionState.INITIAL).olderThan(lease).limit(SHOWN).build();
        long queued = tm.count(waiting);
        if (queued > 0) {
            found.add(new Warning("queued", queued, queued + " queued transaction" + (queued == 1 ? " has" : "s have")
                    + " waited more than " + DurationConverter.format(lease) + " without a worker claiming "
                    + (queued == 1 ? "it" : "them") + ": is `mongo2pc worker` running on this database?", ids(tm.list(waiting))));
        }
        TransactionPage open = tm.list(TransactionQuery.builder().state(TransactionState.PENDING).state(TransactionState.APPLIED)
                .state(TransactionState.CANCELING).limit(TransactionQuery.MAX_LIMIT).build());
        List<Object> stale = new ArrayList<>();
        Set<Object> openIds = new HashSet<>();
        for (TransactionView tx : open.transactions()) {
            openIds.add(tx.id());
            if (tx.isStale(open.asOf(), lease)) {
                stale.add(TransactionIds.printable(tx.id()));
            }
        }
        if (!stale.isEmpty()) {
            found.add(new Warning("stale", stale.size(), stale.size() + " open transaction" + (stale.size() == 1 ? "'s owner" : "s' owners")
                    + " stopped: the lease ran out and nobody has finished " + (stale.size() == 1 ? "it" : "them")
                    + " yet. Recover now (below), or a running worker, finishes " + (stale.size() == 1 ? "it." : "them."),
                    stale.subList(0, Math.min(SHOWN, stale.size()))));
        }
        orphanMarkers(now, openIds).ifPresent(found::add);
        return List.copyOf(found);
    }

    /** Markers on accounts naming no open transaction for {@value #ORPHAN_SECONDS} s or more. */
    private Optional<Warning> orphanMarkers(Instant now, Set<Object> openIds) {
        Map<Object, Object> accountOf = new LinkedHashMap<>();
        for (Bank.Marker marker : session.bank().listMarkers()) {
            accountOf.putIfAbsent(marker.transactionId(), marker.account());
        }
        orphanSince.keySet().retainAll(accountOf.keySet());
        int lookups = 0;
        Map<Object, String> orphans = new LinkedHashMap<>();
        for (Map.Entry<Object, Object> marker : accountOf.entrySet()) {
            Object id = marker.getKey();
            if (openIds.contains(id) || lookups >= LOOKUPS && !orphanSince.containsKey(id)) {
                orphanSince.remove(id);
                continue;
            }
            lookups++; // not among the open ones read (or they were more than one page): look it up
            String state = session.manager().inspect(id).map(tx -> tx.isTerminal() || tx.state() == null
                    ? String.valueOf(TransactionRows.stateText(tx)) : "open").orElse("no such transaction");
            if (state.equals("open")) {
                orphanSince.remove(id);
                continue;
            }
            Instant since = orphanSince.computeIfAbsent(id, k -> now);
            if (!since.isAfter(now.minusSeconds(ORPHAN_SECONDS))) {
                orphans.put(id, marker.getValue() + " carries " + TransactionIds.printable(id) + " (" + state + ")");
            }
        }
        if (orphans.isEmpty()) {
            return Optional.empty();
        }
        List<String> examples = orphans.values().stream().limit(3).toList();
        return Optional.of(new Warning("markers", orphans.size(), orphans.size() + " marker" + (orphans.size() == 1 ? "" : "s")
                + " on accounts name" + (orphans.size() == 1 ? "s" : "") + " no open transaction: " + String.join("; ", examples)
                + (orphans.size() > 3 ? "; ..." : "") + ". Recover now (below) or `mongo2pc recover` removes the markers of an "
                + "ended transaction, and undoes a prepare whose transaction never got its document once its deadline "
                + "has passed; `mongo2pc status --markers` lists every marker.",
                orphans.keySet().stream().limit(SHOWN).map(TransactionIds::printable).toList()));
    }

    private static List<Object> ids(TransactionPage page) {
        return page.transactions().stream().map(tx -> TransactionIds.printable(tx.id())).toList();
    }

    /** {@code {"warnings":[{"kind","count","message","ids"}]}}. */
    static ObjectNode json(List<Warning> warnings) {
        ObjectNode root = Json.object();
        ArrayNode list = root.putArray("warnings");
        for (Warning w : warnings) {
            ObjectNode node = list.addObject();
            node.put("kind", w.kind());
            node.put("count", w.count());
            node.put("message", w.message());
            ArrayNode ids = node.putArray("ids");
            w.ids().forEach(id -> ids.add(Json.value(id)));
        }
        return root;
    }
}
