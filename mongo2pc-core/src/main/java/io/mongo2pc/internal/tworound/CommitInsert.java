package io.mongo2pc.internal.tworound;

import com.mongodb.MongoException;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.OutcomeUnknownException;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.state.Transition;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Phase;
import org.bson.Document;

import java.time.Instant;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The commit point of the two-round commit as its document's first write (docs/TWO-ROUND.md, "The
 * commit insert"): once every prepare is in effect, the owner inserts the transaction document
 * already {@code applied}, if no document has its id. The insert is group-committed with other
 * transactions' writes; a copy of it can only insert or meet a duplicate key, never change a
 * document. It counts as committed only if it ran before the owner's deadline ({@link LateCommit}):
 * the owner knows that without a read when its upper bound of the server's clock says so, else it
 * reads the document back. Thread-safe.
 * Public for the interactive package, as are the members they use.
 */
public final class CommitInsert {
    /** What the commit insert found. */
    public enum Found {
        /** Our document, inserted before its deadline: committed. */
        COMMITTED,
        /** Our document, inserted at or after its deadline (or since repaired): canceled. */
        LATE,
        /** Our document inserted late after a copy of the insert was in doubt: the outcome is not known. */
        UNKNOWN,
        /** A resolver's tombstone for our nonce: abandoned, canceled. */
        ABANDONED,
        /** Our nonce under another token: recovery took the transaction over. */
        TAKEN_OVER,
        /** Another transaction's document (the caller's id run again). */
        OTHER
    }

    private final TwoRoundContext c;
    private final TwoRoundFinish finish;
    /** The outcome of an id another transaction holds (the caller's own id run again). */
    private final BiFunction<Object, List<Operation>, TransactionOutcome> existing;

    CommitInsert(TwoRoundContext c, TwoRoundFinish finish, BiFunction<Object, List<Operation>, TransactionOutcome> existing) {
        this.c = c;
        this.finish = finish;
        this.existing = existing;
    }

    /**
     * Commits {@code tx}, every prepare of which is in effect, by inserting {@code doc}
     * ({@link #commit}), and goes on from what that found: releases (or returns at the commit
     * point), a cancel, or the outcome of the transaction that holds the id.
     */
    TransactionOutcome run(OwnedTransaction tx, Document doc, String token) {
        Found found = commit(tx, doc, token);
        switch (found) {
            case COMMITTED -> {
                // Counted as started once its document is known ours, as on the pending insert's path:
                // a caller's id run again (another transaction's document) starts nothing.
                c.settings().metrics().started();
                return finish.drive(tx, true);
            }
            case LATE, UNKNOWN, ABANDONED -> {
                if (found == Found.LATE) {
                    c.settings().metrics().started();
                }
                late(tx, found);
                return tx.timedOut(found == Found.ABANDONED ? "abandoned: no transaction document before its deadline " + tx.deadline
                        : "its commit was inserted after its deadline " + tx.deadline, c.settings().metrics());
            }
            case TAKEN_OVER -> throw new LeaseLostException("transaction " + tx.id + " was taken over before its owner "
                    + c.settings().owner() + " knew its commit was written", tx.id, TransactionState.PENDING);
            default -> {
                // The id is another transaction's: every prepare of ours answered, none can still land.
                finish.undoAll(tx, false); // by the nonce alone
                return existing.apply(tx.id, tx.ops);
            }
        }
    }

    /**
     * Inserts {@code doc} (the transaction's fields, with its token, nonce and deadline) as
     * {@code applied}, between the crash points of the commit, and tells what that did. On
     * COMMITTED, {@code tx} is applied and stamped (or done, if a reader rolled it forward meanwhile).
     */
    public Found commit(OwnedTransaction tx, Document doc, String token) {
        Document fields = new Document(doc);
        fields.put(Fields.STATE, TransactionState.APPLIED.stored());
        Document filter = TwoRoundFields.absent(tx.id);
        Document update = new Document("$setOnInsert", fields)
                .append("$currentDate", new Document(Fields.LAST_MODIFIED, true).append(TwoRoundFields.INSERTED_AT, true)
                        .append(Fields.COMMITTED_AT, true));
        c.crashPoints().reach(Transition.PENDING_TO_APPLIED, Phase.BEFORE, tx.id);
        Instant sentAfter = c.clock().lowerBound();
        boolean[] inDoubt = new boolean[1];
        WriteCombiner.Answer answer = c.transactionWrites().answer(new UpdateOneModel<>(filter, update, new UpdateOptions().upsert(true)));
        inDoubt[0] = answer == WriteCombiner.Answer.IN_DOUBT;
        try {
            c.crashPoints().reach(Transition.PENDING_TO_APPLIED, Phase.AFTER, tx.id);
        } catch (MongoException e) {
            if (!Retrier.isTransient(e)) {
                throw e;
            }
            answer = WriteCombiner.Answer.IN_DOUBT; // its answer lost: in doubt, as if the request had failed
            inDoubt[0] = true;
        }
        Document stored = null;
        if (answer != WriteCombiner.Answer.MATCHED) {
            stored = c.retrier().call("commit", tx.id, TransactionState.PENDING, () -> insertAlone(tx, filter, update, inDoubt));
        }
        if (stored == null) {
            // Inserted by this request: in time if the server's clock cannot have reached the deadline yet.
            Instant upper = c.clock().upperBound();
            if (upper != null && upper.plus(c.settings().maxClockSkew()).isBefore(tx.deadline)) {
                return committed(tx, sentAfter);
            }
            stored = c.retrier().call("read back", tx.id, TransactionState.PENDING, () -> c.store().find(tx.id));
            if (stored == null) {
                // Inserted, then finished and pruned by others before this read (prune set younger than a lease).
                throw new OutcomeUnknownException("transaction " + tx.id + ": its document was inserted and was gone before"
                        + " its owner could read it back (pruned)", tx.id, TransactionState.PENDING, null);
            }
        }
        if (!token.equals(stored.get(Fields.TOKEN))) {
            return !tx.nonce.equals(stored.get(TwoRoundFields.NONCE)) ? Found.OTHER
                    : Boolean.TRUE.equals(stored.get(Resolver.TOMBSTONE)) ? Found.ABANDONED : Found.TAKEN_OVER;
        }
        TransactionState counted = LateCommit.stateOf(stored);
        if (counted == TransactionState.CANCELED) {
            // Late (perhaps repaired since). If a copy was in doubt, it may have inserted in time, and the
            // transaction committed, finished and been pruned before the copy read here inserted again.
            return inDoubt[0] ? Found.UNKNOWN : Found.LATE;
        }
        if (counted == TransactionState.DONE && TransactionStore.epochOf(stored) == 1L) {
            // In time, and finished since by a reader that rolled it forward (our token: nobody took it over).
            tx.state = TransactionState.DONE;
            return Found.COMMITTED;
        }
        if (counted != TransactionState.APPLIED || TransactionStore.epochOf(stored) != 1L) {
            return Found.TAKEN_OVER; // in time, and since taken over by others
        }
        return committed(tx, TransactionStore.stamped(stored));
    }

    private Found committed(OwnedTransaction tx, Instant stamp) {
        tx.state = TransactionState.APPLIED;
        c.writes().stamped(tx, stamp);
        return Found.COMMITTED;
    }

    /**
     * The commit insert on its own: the document it inserted, or the one that had the id already.
     * A request that failed without an answer sets {@code inDoubt} (it may still insert).
     */
    private Document insertAlone(OwnedTransaction tx, Document filter, Document update, boolean[] inDoubt) {
        try {
            return c.store().insertOrFind(tx.id, filter, update);
        } catch (MongoException e) {
            inDoubt[0] |= Retrier.isInDoubt(e);
            throw e;
        }
    }

    /**
     * Ends a transaction whose commit insert counts as canceled ({@code found} LATE or UNKNOWN):
     * repairs the document, undoes every entry by the nonce (every prepare was answered: none can
     * still land) and returns the outcome, or throws for UNKNOWN.
     */
    public void late(OwnedTransaction tx, Found found) {
        Document stored = c.retrier().call("read back", tx.id, TransactionState.PENDING, () -> c.store().find(tx.id));
        if (stored != null && LateCommit.late(stored)) {
            c.retrier().call("repair", tx.id, TransactionState.PENDING, () -> c.store().repair(stored));
        }
        finish.undoAll(tx, false);
        if (found == Found.UNKNOWN) {
            throw new OutcomeUnknownException("transaction " + tx.id + ": a copy of its commit insert was in doubt and the "
                    + "document found was inserted after its deadline " + tx.deadline
                    + "; it counts as canceled, but the copy in doubt may have committed and finished first", tx.id,
                    TransactionState.PENDING, null);
        }
    }
}
