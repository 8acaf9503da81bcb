package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;

/**
 * The database server's clock. Leases are judged only by it, never by comparing the clocks of
 * application hosts: a stamp written with {@code $currentDate} is read back, which every
 * MongoDB-compatible server supports.
 * Thread-safe.
 */
final class ServerClock {
    private static final String CLOCK_ID = "mongo2pc-clock";
    private final MongoCollection<Document> clocks;

    ServerClock(MongoCollection<Document> clocks) {
        this.clocks = clocks;
    }

    Instant now() {
        Document stamp = clocks.findOneAndUpdate(
                new Document(Fields.ID, CLOCK_ID),
                new Document("$currentDate", new Document("now", true)),
                new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER));
        Date now = stamp == null ? null : stamp.getDate("now");
        if (now == null) {
            throw new IllegalStateException("the server did not return its time from $currentDate");
        }
        return now.toInstant();
    }
}
