package io.mongo2pc.cli;

import com.mongodb.client.MongoCollection;
import org.bson.Document;
import org.bson.types.ObjectId;

import java.util.Date;

/**
 * A transfer as a careful hand-written application follows the tutorial: its eight writes one
 * after another (insert initial, to pending, debit, credit, to applied, two releases, to done),
 * with the same guards as the library (the debit checks {@code balance >= value}); on a refused
 * debit, the tutorial's cancel (to canceling, to cancelled). The {@code tutorial} mode of
 * {@code bench}: the baseline the library is measured against. Thread-safe.
 */
final class TutorialTransfer {
    private final MongoCollection<Document> accounts;
    private final MongoCollection<Document> transactions;

    TutorialTransfer(MongoCollection<Document> accounts, MongoCollection<Document> transactions) {
        this.accounts = accounts;
        this.transactions = transactions;
    }

    /** Runs one transfer; true if done, false if canceled (insufficient funds). */
    boolean transfer(Object source, Object destination, long value) {
        ObjectId t = new ObjectId();
        transactions.insertOne(new Document("_id", t).append("source", source).append("destination", destination)
                .append("value", value).append("state", "initial").append("lastModified", new Date()));
        move(t, "initial", "pending");
        long debited = accounts.updateOne(
                new Document("_id", source).append("pendingTransactions", new Document("$ne", t))
                        .append("balance", new Document("$gte", value)),
                new Document("$inc", new Document("balance", -value)).append("$push", new Document("pendingTransactions", t)))
                .getMatchedCount();
        if (debited == 0) {
            move(t, "pending", "canceling");
            move(t, "canceling", "cancelled");
            return false;
        }
        accounts.updateOne(new Document("_id", destination).append("pendingTransactions", new Document("$ne", t)),
                new Document("$inc", new Document("balance", value)).append("$push", new Document("pendingTransactions", t)));
        move(t, "pending", "applied");
        accounts.updateOne(new Document("_id", source).append("pendingTransactions", t),
                new Document("$pull", new Document("pendingTransactions", t)));
        accounts.updateOne(new Document("_id", destination).append("pendingTransactions", t),
                new Document("$pull", new Document("pendingTransactions", t)));
        move(t, "applied", "done");
        return true;
    }

    private void move(ObjectId t, String from, String to) {
        transactions.updateOne(new Document("_id", t).append("state", from),
                new Document("$set", new Document("state", to)).append("$currentDate", new Document("lastModified", true)));
    }
}
