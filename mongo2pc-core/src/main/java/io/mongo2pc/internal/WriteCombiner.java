package io.mongo2pc.internal;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;

/**
 * Group commit of single-document writes: the threads that write to one collection at the same
 * moment send their writes together, in one unordered bulk request, instead of one request each.
 * The first thread to arrive sends what is queued (it "leads"); the others wait for it, and the
 * next waiting thread leads the next request ({@link Batcher}). A lone thread sends its write at
 * once, as before.
 *
 * <p>Every write stays its own atomic single-document update with its own filter (guards, marker,
 * deadline, compare-and-set): combining changes how many requests carry them, not what each does.
 * The answer is exact for upserts (the server lists the ones it inserted) and for a request whose
 * updates all matched; otherwise it is "unknown" and the caller repeats its write on its own path,
 * which is idempotent and says why a write did not match. A failed request is also "unknown".
 * Thread-safe.
 */
final class WriteCombiner {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WriteCombiner.class);
    /** The most writes in one request. */
    private static final int MAX_WRITES = 256;

    /** What a thread learns of its writes. */
    enum Answer {
        /** Every write took effect: an upsert inserted its document, an update matched one. */
        MATCHED,
        /** The server answered, but not every write is known to have taken effect: none, some or all did. */
        NOT_KNOWN,
        /**
         * The request failed without the server's answer (a network error, a timeout): it may still
         * be running or queued, and take effect later.
         */
        IN_DOUBT
    }

    private final MongoCollection<Document> collection;
    private final Batcher<List<UpdateOneModel<Document>>, Answer> batcher;

    WriteCombiner(MongoCollection<Document> collection) {
        this.collection = collection;
        this.batcher = new Batcher<>(this::send, List::size, MAX_WRITES);
    }

    /**
     * Sends {@code writes} (with whatever other threads are sending) and waits for the answer.
     * True if every write took effect: an upsert inserted its document, an update matched one.
     * False if that is not known; then none, some or all of them took effect.
     */
    boolean write(List<UpdateOneModel<Document>> writes) {
        return writes.isEmpty() || batcher.submit(writes) == Answer.MATCHED;
    }

    boolean write(UpdateOneModel<Document> write) {
        return write(List.of(write));
    }

    /** Like {@link #write(List)}, telling an answer the server gave from a request in doubt. */
    Answer answer(UpdateOneModel<Document> write) {
        return batcher.submit(List.of(write));
    }

    /** One bulk request for the writes of several threads; each thread's answer, in order. Never throws. */
    private List<Answer> send(List<List<UpdateOneModel<Document>>> entries) {
        List<WriteModel<Document>> writes = new ArrayList<>();
        int upserts = 0;
        for (List<UpdateOneModel<Document>> entry : entries) {
            for (UpdateOneModel<Document> w : entry) {
                writes.add(w);
                if (w.getOptions().isUpsert()) {
                    upserts++;
                }
            }
        }
        int count = writes.size();
        boolean[] inserted = new boolean[count];
        boolean updatesAllMatched = false;
        boolean inDoubt = false;
        try {
            BulkWriteResult result = collection.bulkWrite(writes, new BulkWriteOptions().ordered(false));
            for (BulkWriteUpsert upsert : result.getUpserts()) {
                inserted[upsert.getIndex()] = true;
            }
            // An upsert that inserted nothing matched a document; every update matches at most one.
            int updates = count - upserts;
            int upsertsMatched = upserts - result.getUpserts().size();
            updatesAllMatched = result.getMatchedCount() - upsertsMatched == updates;
        } catch (RuntimeException e) {
            // Unknown (nothing marked as taking effect): each writer repeats its write on its own
            // path, which retries or reports the error; after a failure without the server's answer
            // only once the request can no longer take effect (see Engine.participantWrite).
            inDoubt = Retrier.isInDoubt(e);
            log.debug("combined write of {} to {} failed: {}", count, collection.getNamespace(), e.toString());
        }
        List<Answer> answers = new ArrayList<>(entries.size());
        int index = 0;
        for (List<UpdateOneModel<Document>> entry : entries) {
            boolean ok = true;
            for (UpdateOneModel<Document> w : entry) {
                ok &= w.getOptions().isUpsert() ? inserted[index] : updatesAllMatched;
                index++;
            }
            answers.add(ok ? Answer.MATCHED : inDoubt ? Answer.IN_DOUBT : Answer.NOT_KNOWN);
        }
        return answers;
    }
}
