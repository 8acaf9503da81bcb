package io.mongo2pc;

import io.mongo2pc.internal.format.FailedOperations;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A stored transaction as {@link TransactionManager#inspect} reads it. Immutable (the stored
 * {@code document} is a copy).
 *
 * @param state        its state (null for a state mongo2pc does not know)
 * @param application  the tutorial's {@code application} field: the application that runs it (null if none)
 * @param owner        the process that owns it (null for a queued one, or one written by the tutorial's application)
 * @param epoch        its fencing epoch: 1 under its first owner, +1 on every takeover (0 if none)
 * @param lease        its owner's lease (null if none stored)
 * @param lastModified when its owner last wrote it (server time; null if never stamped)
 * @param operations   its operations (empty if mongo2pc cannot read them)
 * @param reason       why it was canceled (null if it was not)
 * @param reasonCode   the reason's code (null if none, see {@link TransactionOutcome#reasonCode()})
 * @param document     the stored document, as is
 * @param lateCommit   true for a two-round transaction whose document says {@code applied} or
 *                     {@code done} but was inserted at or after its deadline: it counts as canceled
 *                     ({@code state} canceled, {@link ReasonCode#TIMED_OUT}) whatever it stores, and
 *                     anyone may repair the stored state (docs/TWO-ROUND.md)
 */
public record TransactionView(Object id, TransactionState state, String application, String owner, long epoch,
                              Duration lease, Instant lastModified, List<Operation> operations, String reason,
                              ReasonCode reasonCode, Document document, boolean lateCommit) {

    public TransactionView {
        operations = List.copyOf(operations);
        document = new Document(document);
    }

    /** A view of a document that is not a commit written after its deadline. */
    public TransactionView(Object id, TransactionState state, String application, String owner, long epoch,
                           Duration lease, Instant lastModified, List<Operation> operations, String reason,
                           ReasonCode reasonCode, Document document) {
        this(id, state, application, owner, epoch, lease, lastModified, operations, reason, reasonCode, document, false);
    }

    /** True once every operation is in effect for good: {@code applied} or {@code done}. */
    public boolean isCommitted() {
        return state == TransactionState.APPLIED || state == TransactionState.DONE;
    }

    /** True for {@code done} and {@code canceled}. */
    public boolean isTerminal() {
        return state != null && state.isTerminal();
    }

    /** When its owner's lease runs out (server time): after that anyone may take it over. Null if unknown. */
    public Instant leaseEnds() {
        return lease == null || lastModified == null ? null : lastModified.plus(lease);
    }

    /**
     * True if it is open under an owner whose lease has run out at {@code now} (server time): any
     * process may take it over, and recovery will. {@code leaseIfNone} is the lease of one stored
     * without its own (by an application that follows the tutorial). A queued ({@code initial}) one
     * has no owner and is never stale.
     */
    public boolean isStale(Instant now, Duration leaseIfNone) {
        if (state == null || isTerminal() || state == TransactionState.INITIAL) {
            return false;
        }
        if (lastModified == null) {
            return true;
        }
        return !now.isBefore(lastModified.plus(lease == null ? leaseIfNone : lease));
    }

    /** The operation whose refusal canceled it (its index and document), or null if none did. */
    public TransactionOutcome.FailedOperation failedOperation() {
        return lateCommit || state != TransactionState.CANCELED && state != TransactionState.CANCELING ? null
                : FailedOperations.of(document);
    }

    /** How it ended, or null while it is open (applied counts as committed). */
    public TransactionOutcome outcome() {
        return isTerminal() || state == TransactionState.APPLIED
                ? new TransactionOutcome(id, state, reason, reasonCode, failedOperation()) : null;
    }
}
