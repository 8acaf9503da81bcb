package io.mongo2pc.testing;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * Builds a two-round transaction whose commit was written after its deadline, as a commit insert
 * landing late (a paused owner, a copy the network held) leaves it: a transfer runs on an owner that
 * crashes at its commit, every prepare in effect: with the commit insert just after it (its
 * document inserted {@code applied}, in time), without it just before the commit (its
 * {@code pending} document inserted by round 1). Then its document is rewritten {@code applied}
 * with {@code until} before {@code insertedAt}.
 * {@link #undoPrepare} takes one prepare back the way a resolver's undo does (behind a tombstone
 * since pruned): the case where rolling the document forward would move money once and a half.
 * Shared with the other modules' tests (mongo2pc-core's test jar).
 */
public final class LateCommits {
    /** What the owner's crash hook throws at its commit. */
    public static final class Crash extends RuntimeException {
        public Crash() {
            super("simulated crash at the commit");
        }
    }

    private LateCommits() { }

    /**
     * Runs transaction {@code id}, a transfer of {@code amount} from {@code from} to {@code to}, on
     * an owner (lease {@code lease}) that crashes at its commit: with {@code commitInsert} just after
     * its commit insert (the document inserted applied), else just before its commit (the document
     * pending); returns its stored document.
     */
    public static Document crashAtTheCommit(MongoClient client, String database, Object id, DocumentRef from, DocumentRef to,
                                            long amount, Duration lease, boolean commitInsert) {
        return crashAtTheCommit(client, database, id, transfer(from, to, amount), lease, commitInsert);
    }

    /** {@link #crashAtTheCommit(MongoClient, String, Object, DocumentRef, DocumentRef, long, Duration, boolean)} of {@code ops}. */
    public static Document crashAtTheCommit(MongoClient client, String database, Object id, List<Operation> ops, Duration lease,
                                            boolean commitInsert) {
        CrashPoint at = commitInsert ? CrashPoint.after(CrashPoint.Step.COMMIT, -1) : CrashPoint.before(CrashPoint.Step.COMMIT, -1);
        TransactionManager owner = TestManagers.crashing(client, database, "late-owner", (point, tx) -> {
            if (point.equals(at)) {
                throw new Crash();
            }
        }).finishInBackground(false).twoRoundCommit(true).commitInsert(commitInsert).lease(lease).build();
        try {
            owner.run(id, ops);
            throw new AssertionError("the owner did not crash at its commit");
        } catch (Crash expected) {
            // its prepares are in effect and its document inserted
        }
        Document doc = transactions(client, database).find(new Document("_id", id)).first();
        if (doc == null || !doc.getString("state").equals(commitInsert ? "applied" : "pending")) {
            throw new AssertionError("the owner crashed at its commit leaving " + (doc == null ? "no document" : doc.toJson()));
        }
        return doc;
    }

    /** The transfer's operations: {@code from} debited under a guard against overdraft, {@code to} credited. */
    public static List<Operation> transfer(DocumentRef from, DocumentRef to, long amount) {
        return List.of(Operation.increment(from, "balance", -amount, new Document("balance", new Document("$gte", amount))),
                Operation.increment(to, "balance", amount, null));
    }

    /** Rewrites {@code id}'s document as a commit written late: applied, its deadline a second before its insert. */
    public static Document rewriteLate(MongoClient client, String database, Object id) {
        MongoCollection<Document> transactions = transactions(client, database);
        Date insertedAt = transactions.find(new Document("_id", id)).first().getDate("insertedAt");
        transactions.updateOne(new Document("_id", id), new Document("$set", new Document("state", "applied")
                .append("until", new Date(insertedAt.getTime() - 1000))));
        return transactions.find(new Document("_id", id)).first();
    }

    /** Rewrites {@code id}'s document as a commit written in time: applied, its deadline as it was (after its insert). */
    public static Document rewriteInTime(MongoClient client, String database, Object id) {
        MongoCollection<Document> transactions = transactions(client, database);
        Document doc = transactions.find(new Document("_id", id)).first();
        if (!doc.getDate("insertedAt").before(doc.getDate("until"))) {
            throw new AssertionError("the document was inserted late already: " + doc.toJson());
        }
        transactions.updateOne(new Document("_id", id), new Document("$set", new Document("state", "applied")));
        return transactions.find(new Document("_id", id)).first();
    }

    /**
     * Undoes the prepare of the only two-round transaction on document {@code docId} of
     * {@code collection} the way a resolver's undo does: its hold given back, its marker and
     * entry removed in one write.
     */
    public static void undoPrepare(MongoCollection<Document> collection, Object docId, Object txId) {
        Document doc = collection.find(new Document("_id", docId)).first();
        String entryName = doc.keySet().stream().filter(k -> LibraryFields.entry(k)).findFirst()
                .orElseThrow(() -> new AssertionError("no entry on " + doc.toJson()));
        Document entry = doc.get(entryName, Document.class);
        Document give = new Document();
        Document now = entry.get("now", Document.class);
        if (now != null) {
            for (Map.Entry<String, Object> e : now.entrySet()) {
                give.append(e.getKey(), -((Number) e.getValue()).longValue());
            }
        }
        Document update = new Document("$pull", new Document("pendingTransactions", txId))
                .append("$unset", new Document(entryName, ""));
        if (!give.isEmpty()) {
            update.append("$inc", give);
        }
        long matched = collection.updateOne(new Document("_id", docId).append("pendingTransactions", txId)
                .append(entryName + ".n", entry.get("n")), update).getMatchedCount();
        if (matched != 1) {
            throw new AssertionError("the undo matched nothing on " + doc.toJson());
        }
    }

    private static MongoCollection<Document> transactions(MongoClient client, String database) {
        return client.getDatabase(database).getCollection("transactions");
    }
}
