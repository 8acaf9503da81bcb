package io.mongo2pc.internal.wire;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.internal.format.Fields;
import org.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Documents read by {@code _id}, a few fields each: the reads that concurrent callers make in one
 * collection share requests (a {@link Batcher} per collection and fields, as writes share them in
 * a {@link WriteCombiner}). Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class DocumentsById {
    /** The most ids asked for in one request. */
    private static final int MAX_IDS = 512;

    private final Targets targets;
    private final int requestsInFlight;
    private final Map<List<Object>, Batcher<List<Object>, List<Document>>> reads = new ConcurrentHashMap<>();

    public DocumentsById(Targets targets, int requestsInFlight) {
        this.targets = targets;
        this.requestsInFlight = requestsInFlight;
    }

    /** The stored documents of {@code ids} that exist, with {@code _id} and {@code fields} (ids compared as MongoDB compares them). */
    public List<Document> read(String target, String database, String collection, List<Object> ids, List<String> fields) {
        MongoCollection<Document> documents = targets.collection(target, database, collection);
        List<String> projected = List.copyOf(fields);
        return reads.computeIfAbsent(List.of(target, database, collection, projected),
                key -> new Batcher<>(asked -> find(documents, projected, asked), List::size, MAX_IDS, requestsInFlight))
                .submit(ids);
    }

    /**
     * One find for every caller's ids at once, by {@code _id} (equality, or a bare $in: both are
     * index lookups); each caller gets its own documents.
     */
    private static List<List<Document>> find(MongoCollection<Document> documents, List<String> fields, List<List<Object>> asked) {
        List<Object> ids = new ArrayList<>();
        asked.forEach(ids::addAll);
        Document filter = new Document(Fields.ID, ids.size() == 1 ? ids.get(0) : new Document("$in", ids));
        List<String> projection = new ArrayList<>(fields);
        projection.add(Fields.ID);
        Map<Object, List<Document>> stored = new HashMap<>();
        for (Document d : documents.find(filter).projection(Projections.include(projection))) {
            stored.computeIfAbsent(DocumentRef.comparableId(d.get(Fields.ID)), k -> new ArrayList<>()).add(d);
        }
        List<List<Document>> answers = new ArrayList<>(asked.size());
        for (List<Object> mine : asked) {
            List<Document> found = new ArrayList<>();
            for (Object id : mine) {
                found.addAll(stored.getOrDefault(DocumentRef.comparableId(id), List.of()));
            }
            answers.add(found);
        }
        return answers;
    }
}
