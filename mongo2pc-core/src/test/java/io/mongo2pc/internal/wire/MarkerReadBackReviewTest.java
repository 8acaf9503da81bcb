package io.mongo2pc.internal.wire;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Group commit's read-back of a tutorial-rules apply: a request whose updates did not all match is
 * judged by the markers on its documents. A marker of the apply's id that carries a two-round entry
 * is another transaction's prepare (one id tried under both rules), not this apply in effect.
 */
class MarkerReadBackReviewTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void tutorialApplyReadBack_markerWithTwoRoundEntryOfItsId_isNotTakenAsInEffect() {
        mongo.skipInvariants("writes raw documents, no transactions");
        MongoCollection<Document> coll = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        coll.insertMany(List.of(
                new Document("_id", "A").append("balance", 90L).append("pendingTransactions", List.of("pay-1"))
                        .append(EntryName.of("pay-1"), new Document("now", new Document("balance", -10L)).append("n", "other-run")),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        // The tutorial-rules apply of pay-1 to A (refused: the marker is there) and a write that matches.
        UpdateOneModel<Document> apply = new UpdateOneModel<>(
                new Document("_id", "A").append("pendingTransactions", new Document("$ne", "pay-1")),
                new Document("$inc", new Document("balance", -10L)).append("$push", new Document("pendingTransactions", "pay-1")));
        UpdateOneModel<Document> other = new UpdateOneModel<>(new Document("_id", "B"), new Document("$inc", new Document("balance", 0L)));

        List<WriteCombiner.Answer> answers = new WriteCombiner(coll, 1).send(List.of(List.of(apply), List.of(other)));

        assertThat(answers.get(0)).as("the apply did not take effect").isNotEqualTo(WriteCombiner.Answer.MATCHED);
        assertThat(coll.find(new Document("_id", "A")).first().getLong("balance")).isEqualTo(90L);
    }
}
