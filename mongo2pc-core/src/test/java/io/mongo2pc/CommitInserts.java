package io.mongo2pc;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the commit insert's tests share (docs/COMMIT-INSERT.md): the request that carries a commit
 * insert, as {@link FaultProxy} sees it; a transfer between {@link TwoAccounts}; the deadline its
 * prepares carry; waiting for the server's clock to pass a time; a crash hook that pauses at a
 * point; the balances with nothing of the protocol left. Stateless.
 */
final class CommitInserts {
    /** A request carrying a commit insert: an insert-if-absent of a transaction document already applied. */
    static final Predicate<String> COMMIT_INSERT = request -> request.contains("$setOnInsert") && request.contains("applied");

    private CommitInserts() { }

    /** 10 from A to B: the debit guarded by its funds. */
    static List<Operation> transfer(TwoAccounts two) {
        return List.of(Operation.increment(two.a(), "balance", -10L, new Document("balance", new Document("$gte", 10L))),
                Operation.increment(two.b(), "balance", 10L, null));
    }

    /** The balances of A and B, asserting that neither carries an entry, a marker or a lock. */
    static List<Long> balances(MongoCollection<Document> accounts) {
        List<Long> balances = new ArrayList<>();
        for (String id : List.of("A", "B")) {
            Document doc = accounts.find(new Document("_id", id)).first();
            assertThat(doc.getList("pendingTransactions", Object.class)).as("markers on " + id).isEmpty();
            assertThat(doc.keySet()).as("entries or lock on " + id).noneMatch(k -> LibraryFields.leftover(k));
            balances.add(doc.getLong("balance"));
        }
        return balances;
    }

    /** The balance of {@code id}, whatever it carries. */
    static long balance(MongoCollection<Document> accounts, String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    /** The deadline of the first entry found on account {@code id}, waiting up to 30 s for one to land. */
    static Instant entryUntil(MongoCollection<Document> accounts, String id) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < giveUp) {
            Document doc = accounts.find(new Document("_id", id)).first();
            for (String key : doc.keySet()) {
                if (LibraryFields.entry(key) && doc.get(key) instanceof Document entry && entry.getDate("until") != null) {
                    return entry.getDate("until").toInstant();
                }
            }
            sleep(20);
        }
        throw new AssertionError("no entry landed on " + id);
    }

    /** The document under {@code id} in {@code transactions}, waiting up to 30 s for one to be there. */
    static Document awaitDocument(MongoCollection<Document> transactions, Object id) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Document doc;
        while ((doc = transactions.find(new Document("_id", id)).first()) == null && System.nanoTime() < giveUp) {
            sleep(20);
        }
        assertThat(doc).as("a document for " + id).isNotNull();
        return doc;
    }

    /** Waits until this host's clock (the embedded server's) is past {@code time} plus {@code margin}. */
    static void awaitPast(Instant time, Duration margin) {
        long wait = Duration.between(Instant.now(), time.plus(margin)).toMillis();
        if (wait > 0) {
            sleep(wait);
        }
    }

    /** Makes {@code proxy} hold every commit insert until {@code release}, counting {@code held} down at the first. */
    static void holdEvery(FaultProxy proxy, CountDownLatch held, CountDownLatch release) {
        proxy.countAnswers(COMMIT_INSERT);
        proxy.runBeforeEvery(COMMIT_INSERT, () -> {
            held.countDown();
            await(release);
        });
    }

    /** A hook that, the first time {@code point} is reached, counts {@code paused} down and waits for {@code resume}. */
    static CrashHook pauseAt(CrashPoint point, CountDownLatch paused, CountDownLatch resume) {
        return (p, id) -> {
            if (p.equals(point) && paused.getCount() > 0) {
                paused.countDown();
                await(resume);
            }
        };
    }

    static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(60, TimeUnit.SECONDS)).as("latch released").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
