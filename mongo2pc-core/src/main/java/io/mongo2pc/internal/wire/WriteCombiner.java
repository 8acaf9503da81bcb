package io.mongo2pc.internal.wire;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.mongo2pc.internal.format.Fields;
import org.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Group commit of single-document writes: the threads that write to one collection at the same
 * moment send their writes together, in one unordered bulk request, instead of one request each.
 * Several such requests are out at once ({@link Batcher}): up to {@code requestsInFlight}, fewer
 * while they come back slower than twice the fastest recent one ({@link InFlightLimit}). A thread
 * that finds a slot free sends its write at once with whatever others queued meanwhile; only when
 * all are out does it queue, and the next sender carries it. A lone thread sends its write at once.
 *
 * <p>Every write stays its own atomic single-document update with its own filter (guards, marker,
 * deadline, compare-and-set): combining changes how many requests carry them, not what each does.
 * The answer is exact for upserts (the server lists the ones it inserted) and for a request whose
 * updates all matched. When some did not, the bulk answer's matched count does not say which:
 * the documents of the request's marker writes (applies and releases, {@link MarkerEffect}) are then
 * read back in one request, and each such write whose marker shows it in effect is answered
 * "matched". The rest are "unknown", and their callers repeat them on their own path, which is
 * idempotent and says why a write did not match. A failed request is also "unknown". Thread-safe.
 * Public for the participants, state, tutorial, tworound and interactive packages and Engine, as are the members they use.
 */
public final class WriteCombiner {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WriteCombiner.class);
    /** The most writes in one request. */
    private static final int MAX_WRITES = 256;

    /** What a thread learns of its writes. */
    public enum Answer {
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
    /** Each thread's writes in, one answer per write out. */
    private final Batcher<List<UpdateOneModel<Document>>, Answer[]> batcher;

    WriteCombiner(MongoCollection<Document> collection, int requestsInFlight) {
        this.collection = collection;
        this.batcher = new Batcher<>(this::sendEach, List::size, MAX_WRITES, requestsInFlight);
    }

    /**
     * Sends {@code writes} (with whatever other threads are sending) and waits for the answer.
     * True if every write took effect: an upsert inserted its document, an update matched one.
     * False if that is not known; then none, some or all of them took effect.
     */
    public boolean write(List<UpdateOneModel<Document>> writes) {
        return writes.isEmpty() || all(batcher.submit(writes)) == Answer.MATCHED;
    }

    public boolean write(UpdateOneModel<Document> write) {
        return write(List.of(write));
    }

    /** Like {@link #write(List)}, telling an answer the server gave from a request in doubt. */
    public Answer answer(UpdateOneModel<Document> write) {
        return batcher.submit(List.of(write))[0];
    }

    /**
     * Like {@link #answer(UpdateOneModel)} for several writes sent together: each one's answer, in
     * order (a write known to have taken effect is MATCHED even when another of them is not known).
     */
    public Answer[] answers(List<UpdateOneModel<Document>> writes) {
        return writes.isEmpty() ? new Answer[0] : batcher.submit(writes);
    }

    /** The answer for writes sent together as one: MATCHED if every one is, IN_DOUBT if any is, else NOT_KNOWN. */
    static Answer all(Answer[] answers) {
        Answer all = Answer.MATCHED;
        for (Answer a : answers) {
            if (a == Answer.IN_DOUBT) {
                return a;
            }
            if (a == Answer.NOT_KNOWN) {
                all = a;
            }
        }
        return all;
    }

    /** One bulk request for the writes of several threads; each thread's answer (see {@link #all}), in order. Never throws. */
    List<Answer> send(List<List<UpdateOneModel<Document>>> entries) {
        List<Answer> answers = new ArrayList<>(entries.size());
        sendEach(entries).forEach(each -> answers.add(all(each)));
        return answers;
    }

    /** One bulk request for the writes of several threads; each thread's answer per write, in order. Never throws. */
    private List<Answer[]> sendEach(List<List<UpdateOneModel<Document>>> entries) {
        List<UpdateOneModel<Document>> writes = new ArrayList<>();
        entries.forEach(writes::addAll);
        int count = writes.size();
        boolean[] inEffect = new boolean[count];
        boolean inDoubt = false;
        try {
            BulkWriteResult result = collection.bulkWrite(new ArrayList<WriteModel<Document>>(writes), new BulkWriteOptions().ordered(false));
            for (BulkWriteUpsert upsert : result.getUpserts()) {
                inEffect[upsert.getIndex()] = true;
            }
            int upserts = (int) writes.stream().filter(w -> w.getOptions().isUpsert()).count();
            // An upsert that inserted nothing matched a document; every update matches at most one.
            int upsertsMatched = upserts - result.getUpserts().size();
            if (result.getMatchedCount() - upsertsMatched == count - upserts) {
                for (int i = 0; i < count; i++) {
                    inEffect[i] |= !writes.get(i).getOptions().isUpsert();
                }
            } else {
                readBack(writes, inEffect);
            }
        } catch (RuntimeException e) {
            // Unknown (nothing marked as taking effect): each writer repeats its write on its own
            // path, which retries or reports the error; after a failure without the server's answer
            // only once the request can no longer take effect (see Engine.participantWrite).
            inDoubt = Retrier.isInDoubt(e);
            log.debug("combined write of {} to {} failed: {}", count, collection.getNamespace(), e.toString());
        }
        List<Answer[]> answers = new ArrayList<>(entries.size());
        int index = 0;
        for (List<UpdateOneModel<Document>> entry : entries) {
            Answer[] each = new Answer[entry.size()];
            for (int i = 0; i < each.length; i++, index++) {
                each[i] = inEffect[index] ? Answer.MATCHED : inDoubt ? Answer.IN_DOUBT : Answer.NOT_KNOWN;
            }
            answers.add(each);
        }
        return answers;
    }

    /**
     * Some update of an answered request matched nothing: reads the documents of its marker writes
     * in one request and marks each such write whose document shows it in effect (an apply's marker
     * present, a release's gone). Only the apply of its own transaction puts a marker on a document,
     * so a marker read is one in effect; what is not shown stays unknown and its writer settles it on
     * its own path. A failed read marks nothing.
     */
    private void readBack(List<UpdateOneModel<Document>> writes, boolean[] inEffect) {
        MarkerEffect[] effects = new MarkerEffect[writes.size()];
        Map<Object, Object> ids = new LinkedHashMap<>();
        Set<String> fields = new LinkedHashSet<>();
        for (int i = 0; i < writes.size(); i++) {
            if (!inEffect[i] && (effects[i] = MarkerEffect.of(writes.get(i))) != null) {
                ids.putIfAbsent(MarkerEffect.key(effects[i].id()), effects[i].id());
                fields.add(effects[i].field());
                if (effects[i].entry() != null) {
                    fields.add(effects[i].entry());
                }
            }
        }
        if (ids.isEmpty()) {
            return;
        }
        try {
            Map<Object, Document> current = new HashMap<>();
            for (Document d : collection.find(new Document(Fields.ID, new Document("$in", new ArrayList<>(ids.values()))))
                    .projection(Projections.include(new ArrayList<>(fields)))) {
                current.put(MarkerEffect.key(d.get(Fields.ID)), d);
            }
            for (int i = 0; i < effects.length; i++) {
                if (effects[i] != null && effects[i].shownBy(current.get(MarkerEffect.key(effects[i].id())))) {
                    inEffect[i] = true;
                }
            }
        } catch (RuntimeException e) {
            log.debug("reading back {} documents of {} failed: {}", ids.size(), collection.getNamespace(), e.toString());
        }
    }
}
