package io.mongo2pc.embedded;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code serverStatus.mongo2pc}: the server's process cost, which bench reads on either side of its measured phase. */
class ServerStatusCostTest {

    @Test
    void serverStatus_afterWork_reportsMoreCpuAndContextSwitchesThanBefore() {
        try (EmbeddedServer server = EmbeddedServer.inMemory().start();
             MongoClient client = MongoClients.create(server.uri())) {
            MongoCollection<Document> counters = client.getDatabase("cost").getCollection("counters");
            counters.insertOne(new Document("_id", "c").append("n", 0));
            Document before = cost(client);

            for (int i = 0; i < 2_000; i++) {
                counters.updateOne(Filters.eq("_id", "c"), Updates.inc("n", 1));
            }
            Document after = cost(client);

            assertThat(after.getLong("processCpuMicros")).isGreaterThan(before.getLong("processCpuMicros")).isPositive();
            assertThat(after.getLong("contextSwitches")).isGreaterThan(before.getLong("contextSwitches"));
        }
    }

    private static Document cost(MongoClient client) {
        Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
        assertThat(status.get("mongo2pc")).as(status.toJson()).isInstanceOf(Document.class);
        return status.get("mongo2pc", Document.class);
    }
}
