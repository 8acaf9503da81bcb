package io.mongo2pc.internal;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import io.mongo2pc.DocumentRef;
import org.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which documents exist, by {@code _id}: the lookups that concurrent callers make in one
 * collection share requests (a {@link Batcher} per collection, as writes share them in a
 * {@link WriteCombiner}). Thread-safe.
 */
final class ExistingIds {
    /** The most ids asked for in one request. */
    private static final int MAX_IDS = 512;

    private final Targets targets;
    private final int requestsInFlight;
    private final Map<List<String>, Batcher<List<Object>, Set<Object>>> lookups = new ConcurrentHashMap<>();

    ExistingIds(Targets targets, int requestsInFlight) {
        this.targets = targets;
        this.requestsInFlight = requestsInFlight;
    }

    /** The stored {@code _id} of each document of {@code ids} that exists (ids compared as MongoDB compares them). */
    Set<Object> existing(String target, String database, String collection, List<Object> ids) {
        MongoCollection<Document> documents = targets.collection(target, database, collection);
        return lookups.computeIfAbsent(List.of(target, database, collection),
                key -> new Batcher<>(asked -> find(documents, asked), List::size, MAX_IDS, requestsInFlight)).submit(ids);
    }

    /**
     * One find for every caller's ids at once, by {@code _id} (equality, or a bare $in: both are
     * index lookups); each caller gets the stored ids of its own documents.
     */
    private static List<Set<Object>> find(MongoCollection<Document> documents, List<List<Object>> asked) {
        List<Object> ids = new ArrayList<>();
        asked.forEach(ids::addAll);
        Document filter = new Document(Fields.ID, ids.size() == 1 ? ids.get(0) : new Document("$in", ids));
        Map<Object, List<Object>> stored = new HashMap<>();
        for (Document d : documents.find(filter).projection(Projections.include(Fields.ID))) {
            Object id = d.get(Fields.ID);
            stored.computeIfAbsent(DocumentRef.comparableId(id), k -> new ArrayList<>()).add(id);
        }
        List<Set<Object>> answers = new ArrayList<>(asked.size());
        for (List<Object> mine : asked) {
            Set<Object> found = new HashSet<>();
            for (Object id : mine) {
                found.addAll(stored.getOrDefault(DocumentRef.comparableId(id), List.of()));
            }
            answers.add(found);
        }
        return answers;
    }
}
