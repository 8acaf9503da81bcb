package io.mongo2pc.internal.state;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lateness rule in its two forms: {@link LateCommit#filter} (counts and lists on the server)
 * matches exactly the documents {@link LateCommit#late} is true of, and the repair changes only a
 * late document, to canceled.
 */
class LateCommitFilterTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Date EARLY = new Date(1_000);
    private static final Date LATER = new Date(2_000);

    @Test
    void filter_matchesExactlyTheDocumentsTheRuleCountsLate() {
        mongo.skipInvariants("hand-made transaction documents left open on purpose, no participants");
        MongoCollection<Document> transactions = mongo.transactions(mongo.database());
        transactions.insertMany(List.of(
                doc("late applied", 2, "applied", LATER, EARLY),
                doc("late done", 2, "done", LATER, EARLY),
                doc("late, inserted at its deadline", 2, "applied", EARLY, EARLY),
                doc("late, capitalized", 2L, "Applied", LATER, EARLY),
                doc("in time", 2, "applied", EARLY, LATER),
                doc("pending, inserted late", 2, "pending", LATER, EARLY),
                doc("canceled, inserted late", 2, "canceled", LATER, EARLY),
                doc("tutorial rules", null, "applied", LATER, EARLY),
                doc("queued, no insertedAt", 2, "applied", null, EARLY),
                doc("no until", 2, "done", LATER, null)));

        List<Object> byFilter = new ArrayList<>();
        transactions.find(LateCommit.filter()).forEach(d -> byFilter.add(d.get("_id")));
        List<Object> byRule = new ArrayList<>();
        transactions.find().forEach(d -> {
            if (LateCommit.late(d)) {
                byRule.add(d.get("_id"));
            }
        });

        assertThat(byRule).containsExactlyInAnyOrder("late applied", "late done", "late, inserted at its deadline",
                "late, capitalized");
        assertThat(byFilter).containsExactlyInAnyOrderElementsOf(byRule);
    }

    @Test
    void repair_cancelsALateDocument_andMatchesNothingElse() {
        mongo.skipInvariants("hand-made transaction documents left open on purpose, no participants");
        MongoCollection<Document> transactions = mongo.transactions(mongo.database());
        Document late = doc("late", 2, "applied", LATER, EARLY).append("nonce", "n");
        Document inTime = doc("in time", 2, "applied", EARLY, LATER).append("nonce", "n");
        transactions.insertMany(List.of(late, inTime));
        TransactionStore store = new TransactionStore(transactions,
                ids -> transactions.find(new Document("_id", new Document("$in", ids))).into(new ArrayList<>()));

        assertThat(store.repair(late)).as("the late document repaired").isTrue();
        assertThat(store.repair(late)).as("repaired again: matches nothing").isFalse();
        assertThat(store.repair(inTime)).as("one in time").isFalse();

        Document repaired = transactions.find(new Document("_id", "late")).first();
        assertThat(repaired.getString("state")).isEqualTo("canceled");
        assertThat(repaired.getString("code")).isEqualTo("TIMED_OUT");
        assertThat(LateCommit.stateOf(repaired)).isEqualTo(LateCommit.stateOf(late));
        assertThat(transactions.find(new Document("_id", "in time")).first().getString("state")).isEqualTo("applied");
    }

    private static Document doc(String id, Object protocol, String state, Date insertedAt, Date until) {
        Document doc = new Document("_id", id).append("state", state);
        if (protocol != null) {
            doc.append("protocol", protocol);
        }
        if (insertedAt != null) {
            doc.append("insertedAt", insertedAt);
        }
        if (until != null) {
            doc.append("until", until);
        }
        return doc;
    }
}
