package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Collection statistics stay right though the data size is summed when asked for, not kept up
 * to date on every update (which cost two encodings of each updated document).
 */
class CollectionStatsTest {

    @Test
    void collStats_afterInsertsUpdatesAndDeletes_reportsTheEncodedSizeOfWhatIsStored() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoDatabase db = client.getDatabase("stats");
            MongoCollection<Document> accounts = db.getCollection("accounts");
            for (int i = 0; i < 20; i++) {
                accounts.insertOne(new Document("_id", "acc-" + i).append("balance", 1000L).append("pendingTransactions", List.of()));
            }
            accounts.updateOne(Filters.eq("_id", "acc-1"), Updates.push("pendingTransactions", "a-much-longer-marker-than-before"));
            accounts.updateOne(Filters.eq("_id", "acc-2"), Updates.set("note", "x".repeat(500)));
            accounts.deleteOne(Filters.eq("_id", "acc-3"));

            long expected = 0;
            for (Document stored : accounts.find()) {
                expected += new RawBsonDocument(stored, new DocumentCodec()).getByteBuffer().remaining();
            }
            Document stats = db.runCommand(new Document("collStats", "accounts"));

            assertThat(((Number) stats.get("count")).longValue()).isEqualTo(19);
            assertThat(((Number) stats.get("size")).longValue()).as(stats.toJson()).isEqualTo(expected);
        }
    }
}
