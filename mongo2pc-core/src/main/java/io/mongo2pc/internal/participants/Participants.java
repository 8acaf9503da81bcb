package io.mongo2pc.internal.participants;

import com.mongodb.MongoServerException;
import com.mongodb.client.model.Projections;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;

import java.time.Instant;
import java.util.Date;
import java.util.List;

/**
 * The writes a transaction makes to its participant documents, handed to the room of each
 * operation's kind: {@link IncrementWrites} (a marker beside the change, many transactions at
 * once), {@link Inserts} and {@link LockedWrites} (update and delete: the document taken under
 * the {@code _m2pc} lock, one transaction at a time). Each write is one atomic single-document
 * update that carries the transaction's marker in {@code pendingTransactions}, so repeating it
 * (after a lost acknowledgement, or by another process) has no further effect:
 * <ul>
 *   <li>apply: only where the marker is absent and the guard holds; adds the marker.</li>
 *   <li>undo: only where the marker is present; reverses the change and removes the marker.</li>
 *   <li>release: only where the marker is present; removes it (after the commit point).</li>
 * </ul>
 * Every write is also fenced by the owner's deadline, checked by the server on its own clock
 * ({@code $expr: {$lt: ["$$NOW", deadline]}}, see {@link #fenced}): a write sent by an owner
 * paused past its lease matches nothing, because no one takes a transaction over before that
 * deadline has passed. Why an apply matched nothing is {@link Refusals}'. Thread-safe.
 * Public for the state, tutorial, tworound, reads, recovery and interactive packages and Engine, as are the members they use.
 */
public final class Participants {
    /** What a participant write did. */
    public enum Kind {
        /** In effect: this call or an earlier one (marker present) applied it; or undo/release done. */
        DONE,
        /** The operation cannot be applied: {@code reason} says why (guard, missing document). */
        REFUSED,
        /** The owner's deadline passed before the server ran the write: renew the lease or stop. */
        EXPIRED,
        /** The document carries as many markers as allowed: wait for other transactions to finish. */
        BUSY
    }

    /**
     * What a write did; a refusal or a wait says why, in words and as a code. {@code seen}: the
     * document as read to tell why (or null), so that the caller can resolve the markers on it
     * without reading it again.
     */
    public record Result(Kind kind, String reason, ReasonCode code, Document seen) {
        public static final Result DONE = new Result(Kind.DONE, null, null, null);
        public static final Result EXPIRED = new Result(Kind.EXPIRED, null, null, null);

        public static Result refused(ReasonCode code, String reason) {
            return refused(code, reason, null);
        }

        public static Result refused(ReasonCode code, String reason, Document seen) {
            return new Result(Kind.REFUSED, reason, code, seen);
        }

        public static Result busy(ReasonCode code, String reason) {
            return new Result(Kind.BUSY, reason, code, null);
        }
    }

    private final Targets targets;
    /** "database.collection" of the transactions collection, written into locks for readers. */
    private final String coordinator;
    private final IncrementWrites increments;
    private final LockedWrites locked;

    public Participants(Targets targets, int maxMarkers, String coordinator) {
        this.targets = targets;
        this.coordinator = coordinator;
        Refusals refusals = new Refusals(maxMarkers);
        this.increments = new IncrementWrites(targets, maxMarkers, refusals);
        this.locked = new LockedWrites(targets, coordinator, refusals);
    }

    /** "database.collection" of the transactions collection. */
    public String coordinator() {
        return coordinator;
    }

    /** Applies {@code op} for {@code txId} unless it already is. */
    public Result apply(Operation op, Object txId, Instant deadline) {
        try {
            if (op instanceof Operation.Increment inc) {
                return increments.apply(inc, txId, deadline);
            }
            if (op instanceof Operation.Insert insert) {
                return Inserts.apply(targets.collection(op.document()), insert, txId, deadline, coordinator);
            }
            return locked.apply(op, txId, deadline);
        } catch (MongoServerException e) {
            if (Retrier.isTransient(e)) {
                throw e;
            }
            // The server refused this change for good (e.g. $inc of a text field, a replacement too
            // large): nothing was written, so it is a refusal that cancels the transaction, not a crash.
            return Result.refused(ReasonCode.GUARD_FAILED, "cannot apply " + OperationCodec.kind(op) + " to " + op.document() + ": "
                    + e.getMessage());
        }
    }

    /** Reverses {@code op} if it is in effect for {@code txId}. */
    public Result undo(Operation op, Object txId, Instant deadline) {
        if (op instanceof Operation.Increment inc) {
            return increments.undo(inc, txId, deadline);
        }
        if (op instanceof Operation.Insert insert) {
            return Inserts.undo(targets.collection(op.document()), insert, txId, deadline);
        }
        return locked.undo(op, txId, deadline);
    }

    /** Removes the marker (and lock) of {@code txId} from the participant of {@code op}; a delete happens here. */
    public Result release(Operation op, Object txId, Instant deadline) {
        if (op instanceof Operation.Increment inc) {
            return increments.release(inc, txId, deadline);
        }
        if (op instanceof Operation.Insert insert) {
            return Inserts.release(targets.collection(op.document()), insert, txId, deadline);
        }
        return locked.release(op, txId, deadline);
    }

    /** Releases the markers of increments that all live in one collection, in one request; true if all matched. */
    public boolean releaseIncrements(List<Operation.Increment> ops, Object txId, Instant deadline) {
        return increments.releaseAll(ops, txId, deadline);
    }

    /** True if every operation is in effect for {@code txId} (its marker is on its document). */
    public boolean allApplied(List<Operation> ops, Object txId) {
        for (Operation op : ops) {
            if (targets.collection(op.document()).find(EntryName.withoutEntry(new Document(Fields.ID, op.document().id()).append(Fields.MARKERS, txId), txId))
                    .projection(Projections.include(Fields.ID)).first() == null) {
                return false;
            }
        }
        return !ops.isEmpty();
    }

    /** Adds the server-side deadline check to {@code filter}. */
    public static Document fenced(Document filter, Instant deadline) {
        return filter.append("$expr", new Document("$lt", List.of("$$NOW", Date.from(deadline))));
    }
}
