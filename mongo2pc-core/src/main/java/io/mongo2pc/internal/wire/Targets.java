package io.mongo2pc.internal.wire;

import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import org.bson.Document;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The named MongoClients a transaction may reach, and collections on them with the configured
 * write and read concerns stated explicitly (never the client's defaults), and Documents written
 * by {@link DirectDocumentCodec}. Thread-safe.
 * Public for the participants, state, tutorial, tworound and reads packages and Engine, as are the members they use.
 */
public final class Targets {
    private record Key(String target, String database, String collection) { }

    private final Map<String, MongoClient> clients;
    private final WriteConcern writeConcern;
    private final ReadConcern readConcern;
    private final Map<Key, MongoCollection<Document>> collections = new ConcurrentHashMap<>();
    private final Map<Key, WriteCombiner> combiners = new ConcurrentHashMap<>();
    private final int requestsInFlight;

    /** {@code requestsInFlight}: the most combined write requests out at once per collection. */
    public Targets(Map<String, MongoClient> clients, WriteConcern writeConcern, ReadConcern readConcern, int requestsInFlight) {
        this.clients = Map.copyOf(clients);
        this.writeConcern = writeConcern;
        this.readConcern = readConcern;
        this.requestsInFlight = requestsInFlight;
    }

    public Set<String> names() {
        return clients.keySet();
    }

    public MongoCollection<Document> collection(DocumentRef ref) {
        return collection(ref.target(), ref.database(), ref.collection());
    }

    /** The group commit of writes to the collection of {@code ref}. */
    public WriteCombiner combiner(DocumentRef ref) {
        return combiner(ref.target(), ref.database(), ref.collection());
    }

    public WriteCombiner combiner(String target, String database, String collection) {
        return combiners.computeIfAbsent(new Key(target, database, collection),
                key -> new WriteCombiner(collection(target, database, collection), requestsInFlight));
    }

    public MongoCollection<Document> collection(String target, String database, String collection) {
        return collections.computeIfAbsent(new Key(target, database, collection), key -> {
            MongoClient client = clients.get(key.target());
            if (client == null) {
                throw new IllegalArgumentException("unknown target '" + key.target() + "', known: " + clients.keySet());
            }
            MongoCollection<Document> coll = client.getDatabase(key.database()).getCollection(key.collection());
            return coll.withCodecRegistry(DirectDocumentCodec.over(coll.getCodecRegistry()))
                    .withWriteConcern(writeConcern)
                    .withReadConcern(readConcern)
                    .withReadPreference(ReadPreference.primary());
        });
    }
}
