package io.mongo2pc.sweeps;

import io.mongo2pc.testing.LibraryFields;
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
 * writing it): the sweeps wait until they can be resolved. Shared with the bank's sweeps. Stateless.
 */
public final class Orphans {
    private Orphans() { }

    /**
     * Waits until the prepares (entries of increments, locks of inserts, updates and deletes) of
     * transactions without a document in {@code database} can be resolved: the server's clock past
     * their deadline plus {@code skew}. The embedded server runs on this host: its clock is this clock.
     */
    public static void awaitResolvable(MongoDatabase database, Duration skew) {
        Predicate<Object> orphan = id -> database.getCollection("transactions").find(new Document("_id", id)).first() == null;
        Instant latest = null;
        for (String collection : database.listCollectionNames().into(new ArrayList<>())) {
            if (collection.startsWith("transactions")) {
                continue;
            }
            for (Document doc : database.getCollection(collection).find()) {
                List<Date> untils = new ArrayList<>();
                if (doc.get("_m2pc") instanceof Document lock && orphan.test(lock.get("tx")) && lock.get("until") instanceof Date until) {
                    untils.add(until);
                }
                if (doc.getList("pendingTransactions", Object.class, List.of()).stream().anyMatch(orphan)) {
                    doc.forEach((key, value) -> {
                        if (LibraryFields.entry(key) && value instanceof Document entry && entry.get("until") instanceof Date until) {
                            untils.add(until);
                        }
                    });
                }
                for (Date until : untils) {
                    latest = latest == null || until.toInstant().isAfter(latest) ? until.toInstant() : latest;
                }
            }
        }
        if (latest != null) {
            long wait = Duration.between(Instant.now(), latest.plus(skew).plusMillis(50)).toMillis();
            if (wait > 0) {
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
