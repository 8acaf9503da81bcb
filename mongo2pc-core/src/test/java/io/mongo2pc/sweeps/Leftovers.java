package io.mongo2pc.sweeps;

import io.mongo2pc.testing.LibraryFields;
import com.mongodb.client.MongoDatabase;
import org.bson.Document;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the sweeps check once a transaction ended: nothing of the protocol left on its documents. Stateless. */
final class Leftovers {
    private Leftovers() { }

    /** Asserts that no document of {@code collections} in {@code database} carries a lock, an entry or a marker. */
    static void assertNoneLeft(MongoDatabase database, List<String> collections, String what) {
        for (String collection : collections) {
            for (Document doc : database.getCollection(collection).find()) {
                assertThat(doc.keySet()).as(what + ": entries or lock left on " + doc.get("_id")).noneMatch(k -> LibraryFields.leftover(k));
                assertThat(doc.getList("pendingTransactions", Object.class, List.of())).as(what + ": markers left").isEmpty();
            }
        }
    }
}
