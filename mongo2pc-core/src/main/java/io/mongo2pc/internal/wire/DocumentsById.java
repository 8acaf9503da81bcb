package io.mongo2pc.internal.wire;

import com.mongodb.MongoInterruptedException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.internal.format.Copies;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Documents read by {@code _id}, whole or a few fields each: the reads that concurrent callers make
 * in one collection share requests (a {@link Batcher} per collection and fields, as writes share
 * them in a {@link WriteCombiner}). A shared request is sent after each of its callers asked and
 * answered before any of them returns, so each caller reads as if it had sent its own. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class DocumentsById {
    /** The most ids asked for in one request. */
    private static final int MAX_IDS = 512;
    /**
     * Reads keep at least this many requests out per collection, however slow recent ones were, so
     * that one slow or stuck find holds up only the reads it carries, not every read of the collection.
     */
    private static final int MIN_IN_FLIGHT = 4;

    private final Targets targets;
    private final int requestsInFlight;
    private final Map<List<Object>, Batcher<List<Object>, List<Document>>> reads = new ConcurrentHashMap<>();

    public DocumentsById(Targets targets, int requestsInFlight) {
        this.targets = targets;
        this.requestsInFlight = requestsInFlight;
    }

    /** The stored documents of {@code ids} that exist, with {@code _id} and {@code fields} (ids compared as MongoDB compares them). */
    public List<Document> read(String target, String database, String collection, List<Object> ids, List<String> fields) {
        List<String> projected = List.copyOf(fields);
        List<String> included = new ArrayList<>(projected);
        included.add(Fields.ID);
        return read(List.of(target, database, collection, projected), Projections.include(included), ids);
    }

    /** The stored documents of {@code ids} that exist, whole (ids compared as MongoDB compares them). */
    public List<Document> readWhole(String target, String database, String collection, List<Object> ids) {
        // A projection keeps the read away from the embedded server's torn-read path.
        return read(List.of(target, database, collection), Projections.exclude("__none"), ids);
    }

    /** {@link #readWhole} of one collection. */
    public Function<List<Object>, List<Document>> wholeOf(String target, String database, String collection) {
        return ids -> readWhole(target, database, collection, ids);
    }

    /**
     * Reads through the collection's batcher. A request sent by a thread that was interrupted fails
     * in the driver for every read it carried: a carried read whose own thread was not interrupted
     * is sent again (a read changes nothing), so one thread's interrupt fails only its own read.
     */
    private List<Document> read(List<Object> key, Bson projection, List<Object> ids) {
        Batcher<List<Object>, List<Document>> batcher = reads.computeIfAbsent(key, k -> {
            MongoCollection<Document> documents = targets.collection((String) k.get(0), (String) k.get(1), (String) k.get(2));
            return new Batcher<>(asked -> find(documents, projection, asked), List::size, MAX_IDS,
                    Math.min(MIN_IN_FLIGHT, requestsInFlight), requestsInFlight);
        });
        while (true) {
            try {
                return batcher.submit(ids);
            } catch (MongoInterruptedException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw e;
                }
            }
        }
    }

    /**
     * One find for every caller's ids at once, by {@code _id} (equality, or a bare $in: both are
     * index lookups); each caller gets its own documents, copies where several asked for one (a
     * caller may change what it got).
     */
    private static List<List<Document>> find(MongoCollection<Document> documents, Bson projection, List<List<Object>> asked) {
        List<Object> ids = new ArrayList<>();
        asked.forEach(ids::addAll);
        Document filter = new Document(Fields.ID, ids.size() == 1 ? ids.get(0) : new Document("$in", ids));
        Map<Object, List<Document>> stored = new HashMap<>();
        for (Document d : documents.find(filter).projection(projection)) {
            stored.computeIfAbsent(Ids.key(d.get(Fields.ID)), k -> new ArrayList<>()).add(d);
        }
        List<List<Document>> answers = new ArrayList<>(asked.size());
        Set<Document> given = Collections.newSetFromMap(new IdentityHashMap<>());
        for (List<Object> mine : asked) {
            List<Document> found = new ArrayList<>();
            for (Object id : mine) {
                for (Document d : stored.getOrDefault(Ids.key(id), List.of())) {
                    found.add(given.add(d) ? d : Copies.copy(d));
                }
            }
            answers.add(found);
        }
        return answers;
    }
}
