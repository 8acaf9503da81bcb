package io.mongo2pc.internal.state;

import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import org.bson.Document;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;

/**
 * The lateness rule of a two-round commit (docs/TWO-ROUND.md, "A commit written after its
 * deadline"): a two-round transaction's document that is {@code applied} or {@code done} counts as
 * committed only if it was inserted before its deadline ({@code insertedAt < until}); one inserted
 * at or after it counts as canceled ({@link ReasonCode#TIMED_OUT}) for every reader, whatever its
 * stored state, and anyone may repair it to {@code canceled}. A document that reached
 * {@code applied} by a compare-and-set was always inserted in time (the commit requires it), and a
 * queued one has no {@code insertedAt}: the rule changes nothing for them. Every reader of a
 * transaction's state goes through {@link #stateOf} (or {@link #late}); queries through
 * {@link #filter}, the same rule as a filter. Stateless.
 * Public for the admin, tutorial, tworound, reads and recovery packages, as are the members they use.
 */
public final class LateCommit {
    public static final String REASON = "committed after its deadline";

    private LateCommit() {
    }

    /** True if {@code transaction} is a two-round document, applied or done, inserted at or after its deadline. */
    public static boolean late(Document transaction) {
        if (!TwoRoundFields.follows(transaction)) {
            return false;
        }
        TransactionState state = stored(transaction).orElse(null);
        if (state != TransactionState.APPLIED && state != TransactionState.DONE) {
            return false;
        }
        return insertedLate(transaction);
    }

    /**
     * True if {@code transaction} was inserted at or after its deadline ({@code insertedAt >= until},
     * both stamped), whatever its state: a {@code pending} one so inserted is canceled by whoever
     * takes it over, an applied or done one is {@link #late}.
     */
    public static boolean insertedLate(Document transaction) {
        return transaction.get(TwoRoundFields.INSERTED_AT) instanceof Date insertedAt && transaction.get(TwoRoundFields.UNTIL) instanceof Date until
                && !insertedAt.before(until);
    }

    /**
     * {@link #late} as a query filter (the documents it is true of), for readers that count or list
     * on the server: {@code protocol: 2}, applied or done, both dates present, {@code insertedAt >= until}.
     */
    public static Document filter() {
        List<String> committed = new ArrayList<>(TransactionState.APPLIED.spellings());
        committed.addAll(TransactionState.DONE.spellings());
        return new Document(TwoRoundFields.PROTOCOL, TwoRoundFields.RULES)
                .append(Fields.STATE, new Document("$in", committed))
                .append(TwoRoundFields.INSERTED_AT, new Document("$type", "date"))
                .append(TwoRoundFields.UNTIL, new Document("$type", "date"))
                .append("$expr", new Document("$gte", List.of("$" + TwoRoundFields.INSERTED_AT, "$" + TwoRoundFields.UNTIL)));
    }

    /** The state {@code transaction} counts as: its stored state, or canceled if it is {@link #late}. */
    public static TransactionState stateOf(Document transaction) {
        return late(transaction) ? TransactionState.CANCELED : TransactionStore.stateOf(transaction);
    }

    /** {@link #stateOf}, empty for a state mongo2pc does not know (instead of refusing it). */
    public static Optional<TransactionState> counted(Document transaction) {
        return late(transaction) ? Optional.of(TransactionState.CANCELED) : stored(transaction);
    }

    private static Optional<TransactionState> stored(Document transaction) {
        Object raw = transaction.get(Fields.STATE);
        return TransactionState.parse(raw instanceof String s ? s : null);
    }

    /**
     * The repair of {@code late} (a {@link #late} document as read): its state becomes canceled with
     * the reason and code it already counts with. The filter is the values read (id, state, nonce,
     * until) and the lateness itself ({@code insertedAt >= until}; not equality on the stamp, which
     * some servers keep finer than a BSON date), so the write changes only a document that already
     * counts as canceled: it changes no outcome.
     */
    static UpdateOneModel<Document> repair(Document late) {
        Document filter = new Document(Fields.ID, late.get(Fields.ID)).append(Fields.STATE, late.get(Fields.STATE))
                .append(TwoRoundFields.NONCE, late.get(TwoRoundFields.NONCE))
                .append(TwoRoundFields.UNTIL, late.get(TwoRoundFields.UNTIL))
                .append(TwoRoundFields.INSERTED_AT, new Document("$gte", late.get(TwoRoundFields.UNTIL)));
        Document set = new Document(Fields.STATE, TransactionState.CANCELED.stored()).append(Fields.REASON, REASON)
                .append(Fields.CODE, ReasonCode.TIMED_OUT.name());
        return new UpdateOneModel<>(filter, new Document("$set", set)
                .append("$currentDate", new Document(Fields.LAST_MODIFIED, true)));
    }
}
