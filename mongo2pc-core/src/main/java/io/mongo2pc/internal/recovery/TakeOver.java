package io.mongo2pc.internal.recovery;

import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.internal.format.UnreadableTransactionException;
import io.mongo2pc.internal.state.LateCommit;
import org.bson.Document;

import java.time.Instant;
import java.util.Optional;

/**
 * Takes a stale transaction over (one compare-and-set: epoch + 1) and drives it to its end; with a
 * cancel reason, a pending one is canceled instead, unless every operation is already applied
 * (then it commits). A commit written after its deadline ({@link LateCommit}) is not taken over:
 * it is repaired to canceled and its entries undone, whatever {@code staleBefore} says (it counts
 * as canceled for everyone already). Empty if another process took it first. Throws
 * {@link UnreadableTransactionException} for a transaction whose operations cannot be read.
 * Public for Engine, as are the members they use.
 */
@FunctionalInterface
public interface TakeOver {
    Optional<TransactionOutcome> takeOver(Document seen, Instant staleBefore, String cancelReason);
}
