package io.mongo2pc.internal;

import io.mongo2pc.CrashPoint;
import io.mongo2pc.CrashPoint.Step;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionState;
import org.bson.Document;

import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * What the two-round commit shares with the engine (settings, the transactions collection, the
 * server's clock, group commit), and its state changes: every one a compare-and-set on state and
 * epoch, as the engine's. Thread-safe.
 */
record TwoRoundContext(Engine.Config config, Targets targets, TransactionStore store, ServerClock clock, Retrier retrier,
                       WritesInDoubt writesInDoubt, WriteCombiner transactionWrites, Entries entries, Resolver resolver,
                       Sweep sweep, Supplier<String> newToken) {

    /** Records a new stamp: the deadline of the owner's fenced writes is the stamp plus the lease, less the skew. */
    void stamped(TwoRoundTx tx, Instant stamp) {
        tx.deadline = stamp.plus(config.lease()).minus(config.maxClockSkew());
        tx.stampedNanos = System.nanoTime();
    }

    /** Compare-and-set of {@code tx}'s state under its epoch; a lost answer is read back, anything else is a lost lease. */
    void move(TwoRoundTx tx, TransactionState to, Step step, Document extra) {
        TransactionState from = tx.state;
        config.crashHook().reached(CrashPoint.before(step, -1), tx.id);
        Instant stamp = retrier.call(step.name().toLowerCase(Locale.ROOT), tx.id, from, () -> {
            Instant sentAfter = clock.lowerBound();
            Instant moved = transactionWrites.write(TransactionStore.moveWrite(tx.id, tx.epoch, from, to, extra))
                    ? sentAfter : store.move(tx.id, tx.epoch, from, to, extra);
            config.crashHook().reached(CrashPoint.after(step, -1), tx.id);
            return moved;
        });
        if (stamp == null) {
            Document current = retrier.call("read", tx.id, from, () -> store.find(tx.id));
            if (current != null && TransactionStore.stateOf(current) == to && TransactionStore.epochOf(current) == tx.epoch) {
                stamp = TransactionStore.stamped(current);
            } else {
                config.metrics().leaseLost();
                throw new LeaseLostException("transaction " + tx.id + ": expected state " + from.stored() + " under epoch "
                        + tx.epoch + " to move to " + to.stored() + ", found "
                        + (current == null ? "no transaction" : "state " + current.get(Fields.STATE) + " epoch "
                        + current.get(Fields.EPOCH) + " owner " + current.get(Fields.OWNER)), tx.id, from);
            }
        }
        tx.state = to;
        stamped(tx, stamp);
    }

    void renewIfDue(TwoRoundTx tx) {
        if (System.nanoTime() - tx.stampedNanos >= config.lease().toNanos() / 3) {
            renew(tx);
        }
    }

    /** Stamps lastModified anew under the epoch: a new deadline; a lost lease if taken over. */
    void renew(TwoRoundTx tx) {
        Instant stamp = retrier.call("renew", tx.id, tx.state, () -> store.renew(tx.id, tx.epoch, tx.state));
        if (stamp == null) {
            config.metrics().leaseLost();
            throw new LeaseLostException("transaction " + tx.id + " was taken over while its owner " + config.owner()
                    + " held it under epoch " + tx.epoch + " in state " + tx.state.stored(), tx.id, tx.state);
        }
        stamped(tx, stamp);
    }

    /** The reason fields of a cancel: the text, and the code when there is one. */
    static Document reasonOf(TwoRoundTx tx) {
        Document reason = new Document(Fields.REASON, tx.reason);
        return tx.code == null ? reason : reason.append(Fields.CODE, tx.code.name());
    }

    static void sleep(long millis, Object txId) {
        try {
            Thread.sleep(millis + ThreadLocalRandom.current().nextLong(millis + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutcomeUnknownException("transaction " + txId + ": interrupted while waiting for a busy document",
                    txId, TransactionState.PENDING, e);
        }
    }
}
