package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.CancelResult;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.PruneResult;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionPage;
import io.mongo2pc.TransactionQuery;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The console's JSON API over one {@link Session}: reads through the manager's read calls, and
 * actions only through the same calls the CLI makes ({@code cancel}, {@code recover},
 * {@code prune}). Each method answers a JSON body or throws {@link ConsoleError}. Thread-safe.
 */
final class ConsoleApi {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ConsoleApi.class);
    private final Session session;
    private final ConsoleSampler sampler;

    ConsoleApi(Session session, ConsoleSampler sampler) {
        this.session = session;
        this.sampler = sampler;
    }

    ConsoleSampler sampler() {
        return sampler;
    }

    private TransactionManager manager() {
        return session.manager();
    }

    private Duration lease() {
        return manager().settings().lease();
    }

    /** The keys of {@code status --json}, as of the sampler's last round (at most one refresh old). */
    ObjectNode status() {
        return sampler.status().json();
    }

    /**
     * {@code transactions list --json} for the query parameters {@code state, olderThan, owner, app, limit, after,
     * from, to, doc} ({@code from}, {@code to}: a time or a duration ago; {@code doc}: the id of a document the
     * transactions touched), or {@code id}: that one transaction.
     */
    ObjectNode transactions(Function<String, List<String>> params) {
        List<String> ids = params.apply("id");
        if (!ids.isEmpty() && !ids.get(0).isBlank()) {
            ObjectNode root = Json.object();
            ArrayNode list = root.putArray("transactions");
            Instant now = manager().serverTime();
            find(ids.get(0).trim()).ifPresent(tx -> list.add(TransactionRows.row(tx, TransactionPage.ageOf(tx, now),
                    tx.isStale(now, lease()))));
            root.put("more", false);
            root.putNull("next");
            root.put("total", list.size());
            return root;
        }
        TransactionQuery.Builder b = TransactionQuery.builder();
        try {
            String from = first(params, "from");
            String to = first(params, "to");
            if (from != null || to != null) {
                Instant now = manager().serverTime();
                b.changedBetween(from == null ? null : TransactionRows.time("from", from).apply(now),
                        to == null ? null : TransactionRows.time("to", to).apply(now));
            }
            String doc = first(params, "doc");
            if (doc != null) {
                b.touching(doc);
            }
            for (String state : params.apply("state")) {
                for (String one : state.split(",")) {
                    if (!one.isBlank()) {
                        b.state(TransactionRows.state(one));
                    }
                }
            }
            String olderThan = first(params, "olderThan");
            if (olderThan != null) {
                b.olderThan(DurationConverter.parse(olderThan));
            }
            String owner = first(params, "owner");
            if (owner != null) {
                b.owner(owner);
            }
            String app = first(params, "app");
            if (app != null) {
                b.application(app);
            }
            String limit = first(params, "limit");
            if (limit != null) {
                b.limit(integer("limit", limit));
            }
            b.after(first(params, "after"));
        } catch (IllegalArgumentException | CliException | picocli.CommandLine.TypeConversionException e) {
            throw ConsoleError.badRequest(e.getMessage());
        }
        TransactionQuery query = b.build();
        return TransactionRows.json(manager().list(query), lease(), manager().count(query));
    }

    /** One transaction in full: its row, lease, operations with each participant as stored now, history and document. */
    ObjectNode transaction(String idText) {
        TransactionView tx = find(idText).orElseThrow(() -> ConsoleError.notFound("no transaction with id " + idText));
        Instant now = manager().serverTime();
        sampler.history().saw(tx.id(), TransactionRows.stateText(tx), tx.lastModified());
        ObjectNode node = TransactionRows.row(tx, TransactionPage.ageOf(tx, now), tx.isStale(now, lease()));
        node.put("lease", tx.lease() == null ? null : TransactionRows.seconds(tx.lease()));
        node.set("leaseEnds", Json.value(tx.leaseEnds()));
        node.set("lastModified", Json.value(tx.lastModified()));
        node.put("canCancel", tx.state() == TransactionState.INITIAL || tx.state() == TransactionState.PENDING);
        ArrayNode ops = node.putArray("operations");
        for (Operation op : tx.operations()) {
            ops.add(operation(tx.id(), op));
        }
        node.set("startedAt", Json.value(tx.document().get("startedAt")));
        node.set("committedAt", Json.value(tx.document().get("committedAt")));
        ArrayNode history = node.putArray("history");
        sampler.history().of(tx.id()).forEach(seen -> history.add(Json.object().put("state", seen.state())
                .put("at", seen.at() == null ? null : seen.at().toString())));
        node.set("actions", Json.value(tx.document().get("actions") instanceof List<?> actions ? actions : List.of()));
        node.set("document", Json.value(tx.document()));
        return node;
    }

    private ObjectNode operation(Object txId, Operation op) {
        ObjectNode node = Json.object();
        String kind;
        Object change;
        if (op instanceof Operation.Increment i) {
            kind = "increment";
            change = i.increments();
        } else if (op instanceof Operation.Insert i) {
            kind = "insert";
            change = i.content();
        } else if (op instanceof Operation.Update u) {
            kind = "update";
            change = u.update();
        } else {
            kind = "delete";
            change = null;
        }
        node.put("op", kind);
        node.put("target", op.document().target());
        node.put("db", op.document().database());
        node.put("coll", op.document().collection());
        node.set("docId", Json.value(op.document().id()));
        node.set("change", Json.value(change));
        node.set("guard", op.guard().isEmpty() ? Json.value(null) : Json.value(op.guard()));
        ObjectNode participant = node.putObject("participant");
        try {
            Optional<Document> doc = manager().read(op.document());
            participant.put("exists", doc.isPresent());
            participant.put("marker", doc.map(d -> carriesMarker(d, txId)).orElse(false));
            participant.set("document", Json.value(doc.orElse(null)));
        } catch (RuntimeException e) {
            participant.put("error", "cannot read " + op.document() + ": " + Words.plain(Connection.rootMessage(e)));
        }
        return node;
    }

    private static boolean carriesMarker(Document doc, Object txId) {
        if (doc.get("pendingTransactions") instanceof List<?> markers && markers.contains(txId)) {
            return true;
        }
        return doc.get("_m2pc") instanceof Document lock && txId.equals(lock.get("tx"));
    }

    /** The owners holding leases on open transactions now, each with its transactions (at most 1000 open ones read). */
    ObjectNode owners() {
        TransactionPage open = manager().list(TransactionQuery.builder().state(TransactionState.PENDING)
                .state(TransactionState.APPLIED).state(TransactionState.CANCELING).limit(TransactionQuery.MAX_LIMIT).build());
        Map<String, List<TransactionView>> byOwner = new LinkedHashMap<>();
        for (TransactionView tx : open.transactions()) {
            byOwner.computeIfAbsent(tx.owner() == null ? "" : tx.owner(), k -> new ArrayList<>()).add(tx);
        }
        ObjectNode root = Json.object();
        ArrayNode owners = root.putArray("owners");
        byOwner.forEach((owner, txs) -> {
            ObjectNode node = owners.addObject();
            node.put("owner", owner.isEmpty() ? null : owner);
            node.put("application", txs.get(0).application());
            node.put("count", txs.size());
            Instant leaseEnds = null;
            boolean allStale = true;
            ArrayNode ids = node.putArray("transactions");
            for (TransactionView tx : txs) {
                if (ids.size() < 20) {
                    ids.add(Json.value(tx.id()));
                }
                if (tx.leaseEnds() != null && (leaseEnds == null || tx.leaseEnds().isAfter(leaseEnds))) {
                    leaseEnds = tx.leaseEnds();
                }
                allStale &= tx.isStale(open.asOf(), lease());
            }
            node.set("leaseEnds", Json.value(leaseEnds));
            node.put("stale", allStale);
        });
        root.put("more", open.more());
        return root;
    }

    /**
     * Cancels before the commit point: 200 canceled (now or before), 404 unknown, 409 past its commit
     * point or owner alive. A cancel made now records {@code by} whom in the transaction's
     * {@code actions} (and in its reason, when none is given).
     */
    ObjectNode cancel(String idText, String reason, String by) {
        TransactionView tx = find(idText).orElseThrow(() -> ConsoleError.notFound("no transaction with id " + idText));
        CancelResult result = manager().cancel(tx.id(), reason == null || reason.isBlank() ? "canceled in the console by " + by
                : reason);
        if (result.kind() == CancelResult.Kind.CANCELED) {
            manager().note(tx.id(), "cancel", by);
        }
        return switch (result.kind()) {
            case NOT_FOUND -> throw ConsoleError.notFound(result.reason());
            case OWNER_ALIVE -> throw new ConsoleError(409, "OWNER_ALIVE", "cannot cancel: " + result.reason());
            case ROLLED_FORWARD -> throw new ConsoleError(409, "PAST_COMMIT_POINT", "cannot cancel: " + result.reason());
            default -> CancelCommand.json(result);
        };
    }

    /**
     * One recovery pass (default: each transaction once its owner's lease has run out), as
     * {@code recover --json}; each transaction stale before it and finished by it (done, applied or
     * canceled now) records that {@code by} recovered it.
     */
    ObjectNode recover(String olderThan, String by) {
        Duration age = olderThan == null || olderThan.isBlank() ? null : duration("olderThan", olderThan);
        TransactionPage open = manager().list(TransactionQuery.builder().state(TransactionState.PENDING)
                .state(TransactionState.APPLIED).state(TransactionState.CANCELING).limit(TransactionQuery.MAX_LIMIT).build());
        ObjectNode report = RecoverCommand.Pass.run(session, age).json();
        for (TransactionView tx : open.transactions()) {
            if (tx.isStale(open.asOf(), lease()) && manager().inspect(tx.id())
                    .filter(now -> now.isTerminal() || now.state() != tx.state()).isPresent()) {
                manager().note(tx.id(), "recover", by);
            }
        }
        log.info("recovery pass by {}: {}", by, Json.write(report));
        return report;
    }

    /**
     * Prunes finished transactions unchanged for {@code olderThan} (required) as {@code prune} does by
     * default (canceled ones kept, ids kept, an age below the longest lease plus the skew margin
     * refused), or with {@code dryRun} only counts them: {@code {"deleted","dryRun","done","canceledKept"}}
     * ({@code deleted} 0 in a dry run; {@code done} what is, or would be, pruned; {@code canceledKept}
     * the canceled ones as old, kept); logs who pruned.
     */
    ObjectNode prune(String olderThan, boolean dryRun, String by) {
        if (olderThan == null || olderThan.isBlank()) {
            throw ConsoleError.badRequest("olderThan is required, e.g. /api/prune?olderThan=7d");
        }
        PruneResult result;
        try {
            result = manager().prune(duration("olderThan", olderThan), PruneOptions.builder().dryRun(dryRun).build());
        } catch (InvalidTransactionException e) {
            throw ConsoleError.badRequest(e.getMessage());
        }
        if (!dryRun) {
            log.info("prune of finished transactions older than {} by {}: {} deleted", olderThan, by, result.pruned());
        }
        return Json.object().put("deleted", dryRun ? 0 : result.pruned()).put("dryRun", dryRun).put("done", result.done())
                .put("canceledKept", result.canceledKept());
    }

    /** The transaction typed as {@code text}, tried as an ObjectId, a string and a number as the CLI does. */
    private Optional<TransactionView> find(String text) {
        try {
            for (Object candidate : TransactionIds.candidates(text)) {
                Optional<TransactionView> view = manager().inspect(candidate);
                if (view.isPresent()) {
                    return view;
                }
            }
        } catch (CliException e) {
            throw ConsoleError.badRequest(e.getMessage());
        }
        return Optional.empty();
    }

    private static String first(Function<String, List<String>> params, String name) {
        List<String> values = params.apply(name);
        return values.isEmpty() || values.get(0).isBlank() ? null : values.get(0).trim();
    }

    private static int integer(String name, String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw ConsoleError.badRequest(name + " must be a whole number, got '" + text + "'");
        }
    }

    private static Duration duration(String name, String text) {
        try {
            return DurationConverter.parse(text);
        } catch (RuntimeException e) {
            throw ConsoleError.badRequest(name + ": " + e.getMessage());
        }
    }
}
