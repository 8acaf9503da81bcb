package io.mongo2pc.testing;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import org.bson.Document;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Leaves what a late copy of an insert leaves, the way an independent check found it: the
 * transaction [insert {@code inserted}, an increment of {@code guarded} whose guard never holds]
 * runs with a lease of 1 s and a socket timeout of 300 ms while the network holds the insert for
 * 6 s; the owner waits out the insert's deadline, retries, is refused by the guard, undoes the
 * insert and cancels; then the held copy creates the document with a lock of the canceled
 * transaction, inserted after its deadline. Shared with the other modules' tests (mongo2pc-core's
 * test jar).
 */
public final class LateInsertCopies {
    private LateInsertCopies() { }

    /**
     * Runs the transaction through a proxy in front of {@code mongoUri}, waits until the held copy
     * has landed ({@code direct} reaches the server without the proxy), and returns the canceled outcome.
     */
    public static TransactionOutcome landAfterCancel(String mongoUri, MongoClient direct, String database,
                                                     DocumentRef inserted, Document content, DocumentRef guarded) throws Exception {
        AtomicInteger held = new AtomicInteger();
        TransactionOutcome outcome;
        MongoCollection<Document> target = direct.getDatabase(inserted.database()).getCollection(inserted.collection());
        try (FaultProxy proxy = new FaultProxy(mongoUri);
             MongoClient viaProxy = proxy.newClient(300)) {
            TransactionManager owner = TransactionManager.builder().target("default", viaProxy).database(database)
                    .application("late-insert-owner").lease(Duration.ofSeconds(1)).maxClockSkew(Duration.ofMillis(100))
                    .retryTimeout(Duration.ofSeconds(10)).build();
            String idText = String.valueOf(inserted.id());
            // the network holds the insert's findAndModify for 6 s (a loaded machine may take 3 s to cancel); the driver gives up after 300 ms
            proxy.runBefore(request -> request.contains("findAndModify") && request.contains(inserted.collection())
                    && request.contains(idText), () -> {
                held.incrementAndGet();
                sleep(6_000);
            });
            long start = System.nanoTime();
            outcome = owner.run(List.of(Operation.insert(inserted, content),
                    Operation.increment(guarded, "balance", 1L, new Document("balance", new Document("$gte", Long.MAX_VALUE)))));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            if (held.get() != 1 || outcome.state() != TransactionState.CANCELED || tookMs >= 6_000) {
                throw new AssertionError("expected the insert held once and the transaction canceled before the copy landed, got "
                        + held + " held, " + outcome.state() + " (" + outcome.reason() + ") after " + tookMs + " ms");
            }
            // the held copy reaches the server about 6 s after it was sent
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (target.find(new Document("_id", inserted.id())).first() == null && System.nanoTime() < until) {
                Thread.sleep(50);
            }
        }
        if (target.find(new Document("_id", inserted.id())).first() == null) {
            throw new AssertionError("the late copy of the insert of " + inserted + " never landed");
        }
        return outcome;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
