package io.mongo2pc.interactive;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.pojo.PojoCodecProvider;
import org.bson.codecs.pojo.annotations.BsonId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Typed documents through the target client's codec registry: a record (the driver's default
 * registry knows records) and a POJO (a client configured with the POJO codec provider), read and
 * written inside a body, across two targets; and a typed value returned by the body and stored for
 * the caller's id run again.
 */
class TypedDocumentsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    /** An item of stock, as a record. */
    public record Item(@BsonId String id, long stock) { }

    /** An order, as a POJO. */
    public static class Order {
        @BsonId
        private String id;
        private String status;

        public Order() { }

        Order(String id, String status) {
            this.id = id;
            this.status = status;
        }

        public String getId() { return id; }
        public void setId(String id) { this.id = id; }
        public String getStatus() { return status; }
        public void setStatus(String status) { this.status = status; }
    }

    private static MongoClient pojoClient() {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new com.mongodb.ConnectionString(mongo.uri()))
                .codecRegistry(CodecRegistries.fromRegistries(MongoClientSettings.getDefaultCodecRegistry(),
                        CodecRegistries.fromProviders(PojoCodecProvider.builder().automatic(true).build())))
                .build());
    }

    @Test
    void recordAndPojo_readAndWrittenThroughTheCodecRegistry_onTwoTargets() {
        mongo.client().getDatabase(mongo.database()).getCollection("items").insertOne(new Document("_id", "i1").append("stock", 5));
        try (MongoClient shop = pojoClient();
             TransactionManager tm = TransactionManager.builder().target("default", mongo.client()).target("shop", shop)
                     .database(mongo.database()).build()) {
            DocumentRef item = DocumentRef.of(mongo.database(), "items", "i1");
            DocumentRef order = new DocumentRef("shop", mongo.database(), "orders", "o1");
            TransactionOptions options = TransactionOptions.builder().id("typed").build();

            TransactionResult<Item> result = tm.transact(options, ctx -> {
                Item i = ctx.get(item, Item.class).orElseThrow();
                ctx.replace(item, new Item("i1", i.stock() - 1));
                ctx.insert(order, new Order("o1", "PAID"));
                Order o = ctx.get(order, Order.class).orElseThrow();
                return new Item(o.getStatus(), ctx.get(item, Item.class).orElseThrow().stock());
            });
            TransactionResult<Item> again = tm.transact(options, ctx -> {
                throw new AssertionError("a caller's id run again does not run its body");
            });

            assertThat(result.value()).isEqualTo(new Item("PAID", 4L));
            assertThat(again.value()).as("the first run's value, stored and read back as its type").isEqualTo(new Item("PAID", 4L));
        }
        Document stored = mongo.client().getDatabase(mongo.database()).getCollection("items").find().first();
        stored.remove(LibraryFields.VERSION);
        assertThat(stored).isEqualTo(new Document("_id", "i1").append("stock", 4L));
        assertThat(mongo.client().getDatabase(mongo.database()).getCollection("orders").find().first())
                .containsEntry("status", "PAID").doesNotContainKey("_m2pc");
    }
}
