package io.mongo2pc.internal.wire;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The write deadline of a combined write is computed from {@link ServerClock#lowerBound()} instead
 * of the stamp the server wrote: fencing holds only if that bound is never later than the stamp
 * of a write sent after it.
 */
class ServerClockBoundTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void lowerBound_isNeverLaterThanTheStampOfAWriteSentAfterIt() throws Exception {
        mongo.skipInvariants("clock documents only");
        MongoCollection<Document> clocks = mongo.client().getDatabase(mongo.database()).getCollection("clock");
        MongoCollection<Document> stamps = mongo.client().getDatabase(mongo.database()).getCollection("stamps");
        ServerClock clock = new ServerClock(clocks);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Long>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            String id = "s" + t;
            futures.add(pool.submit(() -> {
                long closest = Long.MAX_VALUE;
                long end = System.nanoTime() + 2_500_000_000L; // spans more than one reading of the clock
                while (System.nanoTime() < end) {
                    Instant bound = clock.lowerBound();
                    Document stamped = stamps.findOneAndUpdate(new Document("_id", id),
                            new Document("$currentDate", new Document("at", true)),
                            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
                    Instant at = stamped.getDate("at").toInstant();
                    assertThat(bound).as("bound taken before the write").isBeforeOrEqualTo(at);
                    closest = Math.min(closest, at.toEpochMilli() - bound.toEpochMilli());
                }
                return closest;
            }));
        }
        long closest = Long.MAX_VALUE;
        for (Future<Long> f : futures) {
            closest = Math.min(closest, f.get(1, TimeUnit.MINUTES));
        }
        pool.shutdown();
        // Not a useless bound either: it comes within a few milliseconds of the real stamps.
        assertThat(closest).isBetween(0L, 20L);
    }
    /**
     * The commit insert's owner counts its insert in time without a read when this bound (taken
     * after the answer) is before its deadline: the bound must be later than the stamp of every
     * write answered before it was taken, across readings of the clock and with the stamps cut to
     * the millisecond.
     */
    @Test
    void upperBound_isLaterThanTheStampOfEveryWriteAnsweredBeforeIt() throws Exception {
        mongo.skipInvariants("clock documents only");
        MongoCollection<Document> clocks = mongo.client().getDatabase(mongo.database()).getCollection("clock");
        MongoCollection<Document> stamps = mongo.client().getDatabase(mongo.database()).getCollection("stamps");
        ServerClock clock = new ServerClock(clocks);
        assertThat(clock.upperBound()).as("no reading yet: no bound").isNull();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Integer>> futures = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            String id = "u" + t;
            futures.add(pool.submit(() -> {
                int checked = 0;
                long end = System.nanoTime() + 2_500_000_000L; // spans more than one reading of the clock
                while (System.nanoTime() < end) {
                    clock.lowerBound(); // keeps the reading fresh, as the owner does before its commit insert
                    Document stamped = stamps.findOneAndUpdate(new Document("_id", id),
                            new Document("$currentDate", new Document("at", true)),
                            new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
                    Instant upper = clock.upperBound();
                    assertThat(upper).as("bound taken after the write's answer").isAfter(stamped.getDate("at").toInstant());
                    checked++;
                }
                return checked;
            }));
        }
        int checked = 0;
        for (Future<Integer> f : futures) {
            checked += f.get(1, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertThat(checked).isPositive();
    }
}
