package io.mongo2pc.cli;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * Works around a gap between mongo2pc-core and the embedded server: the takeover of a stale
 * transaction matches its {@code lastModified} by equality with the value read back, but
 * mongo-java-server keeps {@code $currentDate} with sub-millisecond precision while the driver
 * reads it back in milliseconds, so the takeover never matches and recovery skips every stale
 * transaction. Before a recovery pass, this rewrites the stamp of each stale open transaction to
 * the millisecond value it reads as, with a compare-and-set on its id, state, epoch and that
 * millisecond (so it never touches a transaction that moved meanwhile). On MongoDB, which keeps
 * milliseconds, the write sets the value it already has.
 */
final class StaleStamps {
    private static final int BATCH = 1000;

    private StaleStamps() { }

    /** Normalizes the stamps of open transactions unchanged for {@code olderThan}; returns how many it rewrote. */
    static int normalize(TransactionManager manager, Duration olderThan) {
        Date staleBefore = Date.from(manager.serverTime().minus(olderThan));
        List<String> states = new ArrayList<>();
        for (TransactionState s : List.of(TransactionState.PENDING, TransactionState.APPLIED, TransactionState.CANCELING)) {
            states.addAll(s.spellings());
        }
        int rewritten = 0;
        for (Document tx : manager.transactions()
                .find(Filters.and(Filters.in("state", states), Filters.lte("lastModified", staleBefore)))
                // An exclusion projection: the embedded server can return torn documents without one (DESIGN.md).
                .projection(Projections.exclude("__none")).limit(BATCH)) {
            rewritten += normalize(manager, tx);
        }
        return rewritten;
    }

    /** Normalizes the stamp of one transaction as read ({@code _id}, {@code state}, {@code epoch}, {@code lastModified}). */
    static int normalize(TransactionManager manager, Document tx) {
        Date stamp = tx.getDate("lastModified");
        if (stamp == null) {
            return 0;
        }
        Bson filter = Filters.and(
                Filters.eq("_id", tx.get("_id")),
                Filters.eq("state", tx.get("state")),
                tx.containsKey("epoch") ? Filters.eq("epoch", tx.get("epoch")) : Filters.exists("epoch", false),
                Filters.gte("lastModified", stamp),
                Filters.lt("lastModified", new Date(stamp.getTime() + 1)));
        return (int) manager.transactions().updateOne(filter,
                new Document("$set", new Document("lastModified", stamp))).getModifiedCount();
    }
}
