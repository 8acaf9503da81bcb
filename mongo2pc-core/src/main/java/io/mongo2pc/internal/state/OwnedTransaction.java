package io.mongo2pc.internal.state;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionMetrics;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.FailedOperations;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A transaction this process owns under {@code epoch}, as the drive loop and the finisher carry
 * it. Not thread-safe: one thread holds it at a time (its caller's, then perhaps the finisher's).
 * Public for the tutorial, tworound, reads, recovery and interactive packages and Engine, as are the members they use.
 */
public final class OwnedTransaction {
    /** The most writes sent in one request; larger transactions go one by one, renewing their lease between. */
    private static final int MAX_BATCH = 8;

    public final Object id;
    public final long epoch;
    public final List<Operation> ops;
    final long startNanos = System.nanoTime();
    public TransactionState state;
    public String reason;
    public ReasonCode code;
    /** The refused operation that cancels it, or null (stored with the reason). */
    public TransactionOutcome.FailedOperation failed;
    /** Server time after which the server refuses this owner's participant writes. */
    public Instant deadline;
    public long stampedNanos;
    /** The two-round commit's nonce (in its document and every entry), or null under the tutorial's rules. */
    public String nonce;
    /** The two-round commit's priority in conflicts (written into every entry and lock), or null under the tutorial's rules. */
    public Priority priority;
    /**
     * The deadline of the round-1 insert of this owner's document (two-round commit), or null: a
     * renewal while pending requires the document inserted before it. A document inserted later
     * may be a copy that landed after a resolver canceled the transaction behind a tombstone that
     * was since pruned; renewing it would let the owner prepare again after that cancel.
     */
    public Instant insertedBefore;

    public OwnedTransaction(Object id, long epoch, List<Operation> ops, TransactionState state, String reason) {
        this.id = id;
        this.epoch = epoch;
        this.ops = ops;
        this.state = state;
        this.reason = reason;
    }

    /** Ends this transaction canceled for {@code reason}, {@link ReasonCode#TIMED_OUT}, counted in {@code metrics}; its outcome. */
    public TransactionOutcome timedOut(String reason, TransactionMetrics metrics) {
        state = TransactionState.CANCELED;
        this.reason = reason;
        code = ReasonCode.TIMED_OUT;
        metrics.canceled(reason);
        return new TransactionOutcome(id, state, reason, code);
    }

    /** The reason fields of a cancel: the text, the code when there is one, and the refused operation when one was. */
    public Document reasonFields() {
        Document fields = new Document(Fields.REASON, reason);
        if (code != null) {
            fields.append(Fields.CODE, code.name());
        }
        return failed == null ? fields : fields.append(Fields.FAILED_OP, FailedOperations.stored(failed));
    }

    /** Cancels for the refusal of operation {@code index}: its reason, code and document. */
    public void refusedAt(int index, Participants.Result refusal) {
        reason = refusal.reason();
        code = refusal.code();
        failed = new TransactionOutcome.FailedOperation(index, ops.get(index).document());
    }

    /** Its outcome as it stands (applied, done or canceled). */
    public TransactionOutcome outcome() {
        return new TransactionOutcome(id, state, reason, code, state == TransactionState.CANCELED ? failed : null);
    }

    /** A transfer's shape: a few increments, all in one collection, so one request can carry them all. */
    public boolean batchable() {
        if (ops.size() < 2 || ops.size() > MAX_BATCH) {
            return false;
        }
        DocumentRef first = ops.get(0).document();
        for (Operation op : ops) {
            DocumentRef ref = op.document();
            if (!(op instanceof Operation.Increment) || !ref.target().equals(first.target())
                    || !ref.database().equals(first.database()) || !ref.collection().equals(first.collection())) {
                return false;
            }
        }
        return true;
    }

    /** The operations of a {@link #batchable} transaction. */
    public List<Operation.Increment> increments() {
        return ops.stream().map(Operation.Increment.class::cast).toList();
    }

    /** Metrics of a transaction this process drove to its end. */
    public void counted(TransactionMetrics metrics) {
        if (state == TransactionState.CANCELED) {
            metrics.canceled(reason);
        } else if (state == TransactionState.DONE) {
            metrics.committed(Duration.ofNanos(System.nanoTime() - startNanos));
        }
    }
}
