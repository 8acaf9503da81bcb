package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;

import java.util.List;

/**
 * An order {@code o1} (UnPaid, total 10) in the test's database and its payment: the order's update
 * to Paid, guarded by UnPaid, with a debit of 10 from an account guarded by its funds. The tests of
 * a transaction with an update beside an increment share it.
 */
record Payment(MongoCollection<Document> orders, DocumentRef order, List<Operation> ops) {

    static Payment create(EmbeddedMongo mongo, DocumentRef debited) {
        MongoCollection<Document> orders = mongo.client().getDatabase(mongo.database()).getCollection("orders");
        orders.insertOne(new Document("_id", "o1").append("state", "UnPaid").append("total", 10L));
        DocumentRef order = DocumentRef.of(mongo.database(), "orders", "o1");
        return new Payment(orders, order, List.of(
                Operation.update(order, new Document("$set", new Document("state", "Paid")), new Document("state", "UnPaid")),
                Operation.increment(debited, "balance", -10L, new Document("balance", new Document("$gte", 10L)))));
    }

    /** The order as stored. */
    Document stored() {
        return orders.find(new Document("_id", "o1")).first();
    }
}
