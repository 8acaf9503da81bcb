package io.mongo2pc.internal.tworound;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOptions;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Inserts;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finds the markers of two-round transactions that no scan of the transactions collection finds:
 * those of a transaction whose insert never landed (its owner crashed in round 1). Each participant
 * collection is recorded once per process, before its first two-round prepare there, in
 * {@code <transactions>_participants}; a sweep reads the documents with markers in those
 * collections and resolves each ({@link Resolver}), at most once per {@code sweepPeriod} in a
 * process ({@link #due}). Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class Sweep {
    private static final Logger log = LoggerFactory.getLogger(Sweep.class);
    /** The most documents with markers read per collection in one sweep. */
    private static final int BATCH = 500;

    private final Targets targets;
    private final MongoCollection<Document> registry;
    private final Resolver resolver;
    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    private final long periodNanos;
    /** When the last sweep this process made began (System.nanoTime), or {@link #NEVER}. */
    private final AtomicLong lastStart = new AtomicLong(NEVER);
    private static final long NEVER = Long.MIN_VALUE;

    public Sweep(Targets targets, MongoCollection<Document> registry, Resolver resolver, Duration period) {
        this.targets = targets;
        this.registry = registry;
        this.resolver = resolver;
        this.periodNanos = period.toNanos();
    }

    /**
     * True if this process has not swept yet or its last sweep began at least a period ago; the
     * caller that gets true sweeps (concurrent callers: one of them).
     */
    public boolean due() {
        long last = lastStart.get();
        long now = System.nanoTime();
        return (last == NEVER || now - last >= periodNanos) && lastStart.compareAndSet(last, now);
    }

    /** Records the collection of {@code ref} as a participant collection (once per process). */
    public void register(DocumentRef ref) {
        String key = ref.target() + "|" + ref.database() + "|" + ref.collection();
        if (registered.contains(key)) {
            return;
        }
        registry.updateOne(new Document(Fields.ID, key),
                new Document("$setOnInsert", new Document("target", ref.target()).append("database", ref.database())
                        .append("collection", ref.collection())), new UpdateOptions().upsert(true));
        registered.add(key);
    }

    /**
     * Resolves what can be resolved of the markers and locks in every recorded collection; returns
     * as canceled the transactions it canceled behind a tombstone (their owner died before writing
     * their document), and the documents late copies of inserts left that it deleted.
     */
    public RecoveryReport sweep() {
        Set<Object> tombstoned = new HashSet<>();
        List<RecoveryReport.LateInsert> late = new ArrayList<>();
        for (Document c : registry.find().into(new ArrayList<>())) {
            if (!(c.get("target") instanceof String target) || !(c.get("database") instanceof String database)
                    || !(c.get("collection") instanceof String collection) || !targets.names().contains(target)) {
                continue;
            }
            try {
                MongoCollection<Document> coll = targets.collection(target, database, collection);
                for (Document doc : coll.find(new Document(Fields.MARKERS + ".0", new Document("$exists", true)))
                        .projection(Projections.exclude("__none")).batchSize(BATCH)) {
                    resolve(coll, new DocumentRef(target, database, collection, doc.get(Fields.ID)), doc, tombstoned, late);
                }
                // Two-round locks of inserts, updates and deletes carry no marker.
                for (Document doc : coll.find(new Document(Fields.LOCK_NONCE, new Document("$exists", true))
                                .append(Fields.MARKERS + ".0", new Document("$exists", false)))
                        .projection(Projections.exclude("__none")).batchSize(BATCH)) {
                    resolve(coll, new DocumentRef(target, database, collection, doc.get(Fields.ID)), doc, tombstoned, late);
                }
            } catch (MongoException e) {
                // a target down: the next pass tries again
                log.warn("could not sweep {}.{} on {}: {}", database, collection, target, e.toString());
            }
        }
        return new RecoveryReport(0, tombstoned.size(), 0, 0, List.of(), late.size(), late);
    }

    private void resolve(MongoCollection<Document> coll, DocumentRef ref, Document doc, Set<Object> tombstoned,
                         List<RecoveryReport.LateInsert> late) {
        if (Inserts.isLate(doc)) {
            // A late copy of an insert reads as never written, whatever its transaction's state (no
            // marker of another transaction can be on it: every prepare requires the lock absent).
            // Deleted while still late, and reported, so the pass can say what it removed.
            Object txId = Exclusive.lockOf(doc).get("tx");
            if (Inserts.deleteLate(coll, ref.id(), doc)) {
                log.info("deleted {}, left by a late copy of the insert of transaction {}", ref, txId);
                late.add(new RecoveryReport.LateInsert(ref, txId));
            }
            return;
        }
        resolver.resolve(coll, doc, null, null, tombstoned::add);
    }
}
