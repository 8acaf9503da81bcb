package io.mongo2pc.internal.wire;

import com.mongodb.MongoClientException;
import com.mongodb.MongoException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.WriteInDoubtException;
import io.mongo2pc.spi.Clock;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Repeats a protocol step through transient database failures, with exponential backoff and
 * jitter, for at most {@code timeout}. Safe only because every step is idempotent: a write whose
 * acknowledgement was lost is recognised on the next try (by its marker or by its CAS having
 * already moved the state). Time is the manager's {@link Clock}. Thread-safe.
 * Public for the participants, admin, tutorial, tworound, recovery and interactive packages and Engine, as are the members they use.
 */
public final class Retrier {
    private static final long FIRST_BACKOFF_MS = 20;
    private static final long MAX_BACKOFF_MS = 1_000;

    private final Duration timeout;
    private final Clock clock;

    public Retrier(Duration timeout, Clock clock) {
        this.timeout = timeout;
        this.clock = clock;
    }

    public <T> T call(String what, Object txId, TransactionState state, Supplier<T> step) {
        long deadline = clock.nanoTime() + timeout.toNanos();
        long backoff = FIRST_BACKOFF_MS;
        while (true) {
            try {
                return step.get();
            } catch (MongoException e) {
                if (!isTransient(e)) {
                    // The server's answer, for good: with a transaction, the caller is told which one
                    // and where it stood (its outcome is read with awaitOutcome).
                    throw txId == null ? e : new TransactionException("the database refused " + what + " of transaction "
                            + txId + where(state) + ": " + e.getMessage(), txId, state, e);
                }
                if (clock.nanoTime() + backoff * 1_000_000 > deadline) {
                    throw new OutcomeUnknownException("gave up on " + what + " of transaction " + txId + where(state) + " after "
                            + timeout.toMillis() + "ms of database errors" + (state == null ? "" : "; recovery will finish it") + ": "
                            + e.getMessage(), txId, state, e);
                }
                sleep(backoff + ThreadLocalRandom.current().nextLong(backoff / 2 + 1), txId, state);
                backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
            }
        }
    }

    /**
     * True if {@code e} leaves a sent write in doubt: no answer from the server, though the request
     * may have reached it and may still take effect. Not a server's answer, nor a request that was
     * never sent (no server selected, no connection opened in time). A client-side operation
     * timeout ({@code timeoutMS}) is in doubt: it ends a request whose answer did not come in time
     * as it ends one that never left.
     */
    public static boolean isInDoubt(RuntimeException e) {
        return !(e instanceof MongoServerException) && !(e instanceof MongoSocketOpenException)
                && (!(e instanceof MongoTimeoutException) || e instanceof MongoOperationTimeoutException);
    }

    public static boolean isTransient(MongoException e) {
        return e instanceof MongoSocketException
                || e instanceof WriteInDoubtException
                || e instanceof MongoTimeoutException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoWriteConcernException
                || (e instanceof MongoClientException && e.getMessage() != null && e.getMessage().contains("state should be: open"))
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)
                || e.hasErrorLabel("RetryableWriteError");
    }

    private void sleep(long millis, Object txId, TransactionState state) {
        try {
            clock.sleep(Duration.ofMillis(millis));
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("interrupted while retrying a step of transaction " + txId, txId, state, ie);
        }
    }

    /** Where the transaction stood, for a message: its state, or nothing for a step of no state (a read). */
    private static String where(TransactionState state) {
        return state == null ? "" : " in state " + state.stored();
    }
}
