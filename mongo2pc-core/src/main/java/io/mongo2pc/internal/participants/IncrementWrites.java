package io.mongo2pc.internal.participants;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.format.WriteInDoubtException;
import io.mongo2pc.internal.participants.Participants.Result;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.internal.wire.WriteCombiner;
import org.bson.Document;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.mongo2pc.internal.participants.Participants.fenced;

/**
 * The writes of an increment (see {@link Participants}): the change and the transaction's marker
 * in one write, so many transactions can hold markers on one document at once (up to
 * {@code maxMarkers}). The apply is sent with other transactions' writes (group commit); its undo
 * adds the opposite amounts and pulls the marker; its release pulls the marker and adds 1 to the
 * document's version ({@link Versions}). Thread-safe.
 * Public for the tutorial package, as are the members they use.
 */
public final class IncrementWrites {
    private final Targets targets;
    private final int maxMarkers;
    private final Refusals refusals;

    IncrementWrites(Targets targets, int maxMarkers, Refusals refusals) {
        this.targets = targets;
        this.maxMarkers = maxMarkers;
        this.refusals = refusals;
    }

    /** Applies {@code inc} for {@code txId} unless it already is. */
    Result apply(Operation.Increment inc, Object txId, Instant deadline) {
        Document filter = filter(inc, txId, deadline);
        Document update = new Document("$inc", inc.increments()).append("$push", new Document(Fields.MARKERS, txId));
        // Sent with other transactions' writes; if that answer is not known, again on its own
        // (idempotent: the marker says if the first one took effect).
        WriteCombiner.Answer answer = targets.combiner(inc.document()).answer(new UpdateOneModel<>(filter, update));
        if (answer == WriteCombiner.Answer.IN_DOUBT) {
            throw new WriteInDoubtException("the combined request with the apply to " + inc.document()
                    + " failed without an answer; it may still take effect");
        }
        MongoCollection<Document> coll = targets.collection(inc.document());
        if (answer == WriteCombiner.Answer.MATCHED || coll.updateOne(filter, update).getMatchedCount() == 1) {
            return Result.DONE;
        }
        return refusals.whyNotApplied(coll, inc, txId, deadline);
    }

    private Document filter(Operation.Increment inc, Object txId, Instant deadline) {
        Document filter = fenced(new Document(Fields.ID, inc.document().id()), deadline)
                .append(Fields.MARKERS, new Document("$ne", txId))
                // Bounded markers: a document never carries more than maxMarkers transactions.
                .append(Fields.MARKERS + "." + (maxMarkers - 1), new Document("$exists", false));
        // The guard is checked in the same atomic write as the change: no overdraft can slip between.
        filter.putAll(inc.guard());
        return filter.append(Fields.LOCK, new Document("$exists", false));
    }

    /** Reverses {@code inc} if it is in effect for {@code txId}: the opposite amounts, the marker pulled. */
    Result undo(Operation.Increment inc, Object txId, Instant deadline) {
        Document negated = new Document();
        for (Map.Entry<String, Object> e : inc.increments().entrySet()) {
            negated.append(e.getKey(), Numbers.negate((Number) e.getValue()));
        }
        return markerWrite(inc, txId, deadline, new Document("$inc", negated).append("$pull", new Document(Fields.MARKERS, txId)));
    }

    /** Removes the marker of {@code txId} from the document of {@code inc}. */
    Result release(Operation.Increment inc, Object txId, Instant deadline) {
        return markerWrite(inc, txId, deadline, releaseUpdate(txId));
    }

    /** A release: the marker pulled and the commit counted in the document's version. */
    private static Document releaseUpdate(Object txId) {
        return new Document("$pull", new Document(Fields.MARKERS, txId)).append("$inc", Versions.bump());
    }

    /** Releases the markers of increments that all live in one collection, in one request; true if all matched. */
    boolean releaseAll(List<Operation.Increment> ops, Object txId, Instant deadline) {
        return targets.combiner(ops.get(0).document()).write(releaseWrites(ops, txId, deadline));
    }

    /** The release writes of increments: each matches only where the marker is, under the deadline. */
    public static List<UpdateOneModel<Document>> releaseWrites(List<Operation.Increment> ops, Object txId, Instant deadline) {
        List<UpdateOneModel<Document>> writes = new ArrayList<>(ops.size());
        for (Operation.Increment inc : ops) {
            writes.add(new UpdateOneModel<>(
                    EntryName.withoutEntry(fenced(new Document(Fields.ID, inc.document().id()), deadline).append(Fields.MARKERS, txId), txId),
                    releaseUpdate(txId)));
        }
        return writes;
    }

    private Result markerWrite(Operation.Increment inc, Object txId, Instant deadline, Document update) {
        MongoCollection<Document> coll = targets.collection(inc.document());
        Document filter = EntryName.withoutEntry(fenced(new Document(Fields.ID, inc.document().id()), deadline).append(Fields.MARKERS, txId), txId);
        if (coll.updateOne(filter, update).getMatchedCount() == 1) {
            return Result.DONE;
        }
        // Matched nothing: either the marker is gone (done before) or the deadline passed first.
        Document current = coll.find(EntryName.withoutEntry(new Document(Fields.ID, inc.document().id()).append(Fields.MARKERS, txId), txId))
                .projection(Projections.include(Fields.ID)).first();
        return current == null ? Result.DONE : Result.EXPIRED;
    }
}
