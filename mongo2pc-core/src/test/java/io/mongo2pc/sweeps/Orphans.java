package io.mongo2pc.sweeps;

import io.mongo2pc.internal.format.EntryName;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.Predicate;

/**
 * Prepares of two-round transactions that have no transaction document (their owner stopped before
 * writing it): they can be resolved once the server's clock is past their deadline plus the clock
 * skew allowed. The sweeps either wait for that ({@link #awaitResolvable}) or move the deadlines
 * into the past ({@link #expire}), as {@code EmbeddedMongo.expireLeases} does for leases. Shared
 * with the bank's sweeps. Stateless.
 */
public final class Orphans {
    /** How far past the deadline plus the skew {@link #expire} moves the server's clock, in effect. */
    private static final Duration MARGIN = Duration.ofSeconds(1);

    private Orphans() { }

    /** One prepare of a transaction without a document: a lock ({@code _m2pc}) or an entry ({@code _m2pc_<id>}). */
    private record Prepare(MongoCollection<Document> collection, Object docId, String field, Document hold) {
        Instant until() {
            return hold.getDate("until").toInstant();
        }
    }

    /**
     * Waits until the prepares (entries of increments, locks of inserts, updates and deletes) of
     * transactions without a document in {@code database} can be resolved: the server's clock past
     * their deadline plus {@code skew}. The embedded server runs on this host: its clock is this clock.
     */
    public static void awaitResolvable(MongoDatabase database, Duration skew) {
        long wait = Duration.between(Instant.now(), resolvableAt(orphans(database), skew)).toMillis();
        if (wait > 0) {
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Makes the prepares of transactions without a document in {@code database} resolvable now, as
     * {@link #awaitResolvable} would by waiting: moves each one's deadline ({@code until}) back by
     * the same amount, so that the server's clock is past the latest of them plus {@code skew}. An
     * insert's lock also carries the server time its insert ran ({@code at}, before {@code until}
     * unless the insert was late): it moves back by as much, so that the insert reads as it did.
     * Recovery then finds them as it would once their deadline had passed, and decides by the same
     * check of the deadline against the server's clock. Returns how many prepares it moved.
     */
    public static int expire(MongoDatabase database, Duration skew) {
        List<Prepare> orphans = orphans(database);
        Duration back = Duration.between(Instant.now(), resolvableAt(orphans, skew)).plus(MARGIN);
        if (orphans.isEmpty() || back.isNegative()) {
            return 0;
        }
        for (Prepare p : orphans) {
            Document set = new Document(p.field() + ".until", Date.from(p.until().minus(back)));
            if (p.hold().get("at") instanceof Date at) {
                set.append(p.field() + ".at", Date.from(at.toInstant().minus(back)));
            }
            long moved = p.collection().updateOne(new Document("_id", p.docId()).append(p.field() + ".until", p.hold().getDate("until")),
                    new Document("$set", set)).getModifiedCount();
            if (moved != 1) {
                throw new IllegalStateException("the prepare " + p.field() + " on " + p.docId() + " changed while its deadline was moved");
            }
        }
        return orphans.size();
    }

    /** The server time from which every prepare in {@code orphans} can be resolved (a past time if none). */
    private static Instant resolvableAt(List<Prepare> orphans, Duration skew) {
        return orphans.stream().map(Prepare::until).max(Instant::compareTo).orElse(Instant.EPOCH).plus(skew).plusMillis(50);
    }

    private static List<Prepare> orphans(MongoDatabase database) {
        Predicate<Object> orphan = id -> database.getCollection("transactions").find(new Document("_id", id)).first() == null;
        List<Prepare> prepares = new ArrayList<>();
        for (String name : database.listCollectionNames().into(new ArrayList<>())) {
            if (name.startsWith("transactions")) {
                continue;
            }
            MongoCollection<Document> collection = database.getCollection(name);
            for (Document doc : collection.find()) {
                if (doc.get("_m2pc") instanceof Document lock && orphan.test(lock.get("tx")) && lock.get("until") instanceof Date) {
                    prepares.add(new Prepare(collection, doc.get("_id"), "_m2pc", lock));
                }
                for (Object marker : doc.getList("pendingTransactions", Object.class, List.of())) {
                    if (EntryName.supports(marker) && doc.get(EntryName.of(marker)) instanceof Document entry
                            && entry.get("until") instanceof Date && orphan.test(marker)) {
                        prepares.add(new Prepare(collection, doc.get("_id"), EntryName.of(marker), entry));
                    }
                }
            }
        }
        return prepares;
    }
}
