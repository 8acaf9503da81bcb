package io.mongo2pc.internal.state;

import com.mongodb.client.model.Projections;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.Values;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.participants.Refusals;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;
import org.bson.types.Decimal128;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Refuses, as bad input before anything is written, an increment whose amount would change the
 * number type or the scale of the field it adds to: MongoDB's {@code $inc} of {@code 1.5} turns the
 * integer {@code 5} into the double {@code 6.5}, and of {@code 0.001} turns the decimal {@code 10.00}
 * into {@code 10.001}. An integer amount never does (an integer stays an integer, a double a double,
 * a decimal keeps its places), so only increments by a double or a decimal are checked, by one read
 * of their document; an operation flagged {@link Operation.Flag#ALLOW_TYPE_CHANGE} is not.
 *
 * <p>The stored type is read when the transaction starts (and again when a worker claims a queued
 * one), not in the write that prepares it: a field whose type another writer changes in between
 * is not caught. Within mongo2pc only a flagged operation changes a type. Thread-safe.
 */
final class NumberTypes {
    private final Targets targets;

    NumberTypes(Targets targets) {
        this.targets = targets;
    }

    /** Throws {@link InvalidTransactionException} (for transaction {@code id}) naming the first increment that would change a type. */
    void check(List<Operation> ops, Object id) {
        for (int i = 0; i < ops.size(); i++) {
            Operation op = ops.get(i);
            Map<String, Number> amounts = fractionalAmounts(op);
            if (amounts.isEmpty() || op.flags().contains(Operation.Flag.ALLOW_TYPE_CHANGE)) {
                continue;
            }
            Document stored = targets.collection(op.document()).find(new Document(Fields.ID, op.document().id()))
                    .projection(Projections.include(new ArrayList<>(amounts.keySet()))).first();
            if (stored == null) {
                continue; // the transaction is canceled for the missing document (DOCUMENT_MISSING)
            }
            for (Map.Entry<String, Number> e : amounts.entrySet()) {
                String problem = problem(Refusals.fieldValue(stored, e.getKey()), e.getValue());
                if (problem != null) {
                    throw new InvalidTransactionException("operation " + i + " on " + op.document() + ": an increment of "
                            + e.getKey() + " by " + Values.plain(e.getValue()) + " would " + problem
                            + "; give an amount of its type, or allow the change on the operation (\"allowTypeChange\": true,"
                            + " the flag ALLOW_TYPE_CHANGE)", id);
                }
            }
        }
    }

    /** The amounts of {@code op}'s increments ({@code $inc} of an update too) that are not integers. */
    private static Map<String, Number> fractionalAmounts(Operation op) {
        Object increments = op instanceof Operation.Increment inc ? inc.increments()
                : op instanceof Operation.Update update ? update.update().get("$inc") : null;
        Map<String, Number> amounts = new LinkedHashMap<>();
        if (increments instanceof Document changes) {
            changes.forEach((field, amount) -> {
                if (amount instanceof Double || amount instanceof Float || amount instanceof Decimal128) {
                    amounts.put(field, (Number) amount);
                }
            });
        }
        return amounts;
    }

    /** What adding {@code amount} to {@code stored} would change, in words; null if nothing. */
    static String problem(Object stored, Number amount) {
        if (!(stored instanceof Number number) || !Numbers.isFinite(number) || !Numbers.isFinite(amount)) {
            return null; // nothing to keep: a missing field takes the amount's type; a text field refuses the write
        }
        boolean integer = stored instanceof Integer || stored instanceof Long;
        String was = Values.plain(stored);
        if (amount instanceof Decimal128 decimal) {
            if (integer) {
                return "turn the integer " + was + " into a decimal";
            }
            if (stored instanceof Double) {
                return "turn the double " + was + " into a decimal";
            }
            int places = Math.max(0, Numbers.exact(decimal).stripTrailingZeros().scale());
            int scale = Math.max(0, Numbers.exact((Decimal128) stored).scale());
            return places > scale ? "give the decimal " + was + " (" + scale + " decimal places) " + places + " places" : null;
        }
        if (integer) {
            return "turn the integer " + was + " into a double";
        }
        return stored instanceof Decimal128 ? "add a double to the decimal " + was + ", inexactly" : null;
    }

}
