package io.mongo2pc;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code readCommitted} of one document that changes between every two of its reads while it carries
 * a transaction's entry: after many reads it is read as a cut of one, which judges its changes, and
 * returns the committed value once a moment can be told.
 */
class ReadCommittedHotDocumentTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final class Stop extends RuntimeException {
        Stop() {
            super("stop before the commit point", null, false, false);
        }
    }

    @Test
    void readCommitted_documentChangedBeforeEveryReadForAWhile_readAsACutOfOne_returnsTheCommittedValue() throws Exception {
        // Given a transfer of 10 from a0 to a1 prepared (its document inserted in round 1, so that
        // recovery can end it), its entries on both (its owner stopped just before its commit point),
        // and a program outside any transaction that touches a0 before each of its next 150 reads
        // (more than a single read tries before it reads the document as a cut)
        String db = mongo.database();
        MongoCollection<Document> accounts = mongo.client().getDatabase(db).getCollection("accounts");
        for (String id : List.of("a0", "a1")) {
            accounts.insertOne(new Document("_id", id).append("balance", 1_000L));
        }
        DocumentRef a0 = DocumentRef.of(db, "accounts", "a0");
        DocumentRef a1 = DocumentRef.of(db, "accounts", "a1");
        TransactionManager writer = TransactionManager.builder().finishInBackground(false).commitInsert(false).target("default", mongo.client())
                .database(db).application("writer").crashHook((p, id) -> {
                    if (p.equals(CrashPoint.before(CrashPoint.Step.COMMIT, -1))) {
                        throw new Stop();
                    }
                }).build();
        assertThatThrownBy(() -> writer.run(List.of(Operation.increment(a0, "balance", -10L, null),
                Operation.increment(a1, "balance", 10L, null)))).isInstanceOf(Stop.class);
        AtomicInteger touched = new AtomicInteger();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient();
             TransactionManager reader = TransactionManager.builder().target("default", viaProxy).database(db)
                     .application("reader").conflictTimeout(Duration.ofSeconds(30)).build()) {
            proxy.runBeforeEvery(request -> request.contains("find") && request.contains("accounts"), () -> {
                if (touched.get() < 150) {
                    accounts.updateOne(new Document("_id", "a0"), new Document("$inc", new Document("touched", 1)));
                    touched.incrementAndGet();
                }
            });

            // When a0 is read
            Document view = reader.readCommitted(a0).orElseThrow();

            // Then it was read past the changes (a single read that takes a view after many changes whose
            // transaction is still on the document may show a value of no one moment), without the
            // transfer, which has not committed
            assertThat(touched).as("changes under the reads").hasValue(150);
            assertThat(view.get("balance")).isEqualTo(1_000L);
            assertThat(view.get("touched")).isEqualTo(150L);
        } finally {
            writer.close();
            mongo.expireLeases(db);
            try (TransactionManager recoverer = TransactionManager.builder().target("default", mongo.client()).database(db)
                    .application("recoverer").build()) {
                recoverer.recover(Duration.ZERO);
            }
        }
    }
}
