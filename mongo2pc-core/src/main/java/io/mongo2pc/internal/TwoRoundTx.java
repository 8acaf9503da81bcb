package io.mongo2pc.internal;

import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;

import java.time.Instant;
import java.util.List;

/** A two-round transaction this process owns under {@code epoch}. Used by one thread at a time. */
final class TwoRoundTx {
    final Object id;
    final long epoch;
    final List<Operation.Increment> ops;
    /** Chosen with the transaction, never changed; in every entry. */
    final String nonce;
    final long startNanos = System.nanoTime();
    TransactionState state;
    String reason;
    ReasonCode code;
    /** Server time after which the server refuses this owner's fenced participant writes. */
    Instant deadline;
    long stampedNanos;

    TwoRoundTx(Object id, long epoch, List<Operation.Increment> ops, TransactionState state, String nonce) {
        this.id = id;
        this.epoch = epoch;
        this.ops = ops;
        this.state = state;
        this.nonce = nonce;
    }
}
