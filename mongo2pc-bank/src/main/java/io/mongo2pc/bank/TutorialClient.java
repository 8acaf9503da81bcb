package io.mongo2pc.bank;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import org.bson.Document;
import org.bson.types.ObjectId;

import java.util.Date;
import java.util.Optional;

/**
 * Transfers as a careful hand-written application follows MongoDB's tutorial "Perform Two Phase
 * Commits", without mongo2pc: its writes one after another, in the tutorial's document shape. It
 * is the baseline {@code bench} measures the library against, and the other application that
 * shares accounts and a queue with mongo2pc in the coexistence tests. The debit checks
 * {@code balance >= value} as the library's does; a refused debit cancels as the tutorial does
 * (to {@code canceling}, then {@code cancelled}). No recovery, no fencing: a crash leaves its
 * transaction for mongo2pc's recovery. Thread-safe.
 */
public final class TutorialClient {
    private final MongoCollection<Document> accounts;
    private final MongoCollection<Document> transactions;
    private final String application;

    /**
     * A client writing {@code accounts} and {@code transactions}; {@code application} names it in
     * the transactions it claims ({@link #claimAndRun()}).
     */
    public TutorialClient(MongoCollection<Document> accounts, MongoCollection<Document> transactions, String application) {
        this.accounts = accounts;
        this.transactions = transactions;
        this.application = application;
    }

    /**
     * One transfer, its eight writes one after another (insert initial, to pending, debit, credit,
     * to applied, two releases, to done); true if done, false if canceled (insufficient funds).
     */
    public boolean transfer(Object source, Object destination, long value) {
        ObjectId t = new ObjectId();
        transactions.insertOne(new Document("_id", t).append("source", source).append("destination", destination)
                .append("value", value).append("state", "initial").append("lastModified", new Date()));
        move(t, "initial", "pending");
        return run(t, source, destination, value);
    }

    /**
     * Claims one queued transfer as the tutorial's "multiple applications" section writes it (the
     * oldest {@code initial} one no application has taken, set to {@code pending} with this
     * application's name) and runs it; its id, or empty when none is queued.
     */
    public Optional<Object> claimAndRun() {
        Document t = transactions.findOneAndUpdate(
                new Document("state", "initial").append("application", new Document("$exists", false)),
                new Document("$set", new Document("state", "pending").append("application", application))
                        .append("$currentDate", new Document("lastModified", true)),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
        if (t == null) {
            return Optional.empty();
        }
        run(t.get("_id"), t.get("source"), t.get("destination"), ((Number) t.get("value")).longValue());
        return Optional.of(t.get("_id"));
    }

    /** A pending transfer to its end; true if done, false if canceled. */
    private boolean run(Object t, Object source, Object destination, long value) {
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

    private void move(Object t, String from, String to) {
        transactions.updateOne(new Document("_id", t).append("state", from),
                new Document("$set", new Document("state", to)).append("$currentDate", new Document("lastModified", true)));
    }
}
