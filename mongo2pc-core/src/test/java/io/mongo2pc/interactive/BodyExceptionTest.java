package io.mongo2pc.interactive;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A body's exception reaches the caller only if the body decided on a view that still holds: one
 * thrown on a torn view (a read made stale by a commit between two reads) is a conflict, and the
 * body runs again on what is committed now.
 */
class BodyExceptionTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionManager tm;
    private DocumentRef a;
    private DocumentRef b;

    @BeforeEach
    void setUp() {
        a = DocumentRef.of(mongo.database(), "accounts", "A");
        b = DocumentRef.of(mongo.database(), "accounts", "B");
        tm = TestManagers.builder(mongo.client(), mongo.database(), "body-exception").build();
        MongoCollection<Document> accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        accounts.insertOne(new Document("_id", "A").append("balance", 100L));
        accounts.insertOne(new Document("_id", "B").append("balance", 0L));
    }

    @AfterEach
    void close() {
        tm.close();
    }

    private long total(io.mongo2pc.TransactionContext ctx) {
        long first = ctx.get(a).orElseThrow().getLong("balance");
        if (ctx.attempt() == 1) {
            // Another transaction moves money from A to B between this body's two reads.
            assertThat(tm.run(Transfers.of(mongo.database(), "A", "B", 30)).isCommitted()).isTrue();
        }
        return first + ctx.get(b).orElseThrow().getLong("balance");
    }

    @Test
    void bodyThrowsOnATornView_isAConflict_andRunsAgainOnTheCommittedState() {
        TransactionResult<Long> result = tm.transact(ctx -> {
            long total = total(ctx);
            if (total != 100L) {
                throw new IllegalStateException("the bank lost money: " + total);
            }
            return total;
        });

        assertThat(result.value()).isEqualTo(100L);
        assertThat(result.attempts()).isEqualTo(2);
    }

    @Test
    void bodyThrowsOnAViewThatHolds_theCallerGetsTheExceptionAsThrown() {
        IllegalArgumentException refused = new IllegalArgumentException("amount too large");

        assertThatThrownBy(() -> tm.transact(ctx -> {
            ctx.get(a);
            ctx.get(b);
            throw refused;
        })).isSameAs(refused);
    }
}
