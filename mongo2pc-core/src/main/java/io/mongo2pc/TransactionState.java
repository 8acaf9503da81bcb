package io.mongo2pc;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The states of a transaction, stored as the lowercase strings the tutorial writes.
 *
 * <pre>
 * initial ──> pending ──> applied ──> done
 *                │
 *                └──> canceling ──> canceled
 * </pre>
 *
 * The commit point is {@code pending -> applied}: before it a transaction can be canceled, after
 * it it is only ever rolled forward. {@code initial} may also go straight to {@code canceled}
 * (a queued transaction canceled before anyone claimed it: nothing to undo). The older spellings
 * {@code committed} and {@code cancelled} are read as {@link #APPLIED} and {@link #CANCELED}.
 * Immutable and thread-safe.
 */
public enum TransactionState {
    INITIAL("initial"),
    PENDING("pending"),
    APPLIED("applied", "committed"),
    DONE("done"),
    CANCELING("canceling"),
    CANCELED("canceled", "cancelled");

    private static final Map<TransactionState, Set<TransactionState>> ALLOWED = Map.of(
            INITIAL, EnumSet.of(PENDING, CANCELED),
            PENDING, EnumSet.of(APPLIED, CANCELING),
            APPLIED, EnumSet.of(DONE),
            CANCELING, EnumSet.of(CANCELED),
            DONE, EnumSet.noneOf(TransactionState.class),
            CANCELED, EnumSet.noneOf(TransactionState.class));

    private final String stored;
    private final List<String> spellings;

    TransactionState(String stored, String... older) {
        this.stored = stored;
        // Queries must match every spelling parse() accepts: the older words and the capitalized
        // forms some versions of the tutorial write ("Pending").
        List<String> all = new ArrayList<>();
        for (String word : older.length == 0 ? List.of(stored) : List.of(stored, older[0])) {
            all.add(word);
            all.add(Character.toUpperCase(word.charAt(0)) + word.substring(1));
        }
        this.spellings = List.copyOf(all);
    }

    /** The string written to the {@code state} field. */
    public String stored() {
        return stored;
    }

    /** Every string that reads as this state and that queries match (the stored one first). */
    public List<String> spellings() {
        return spellings;
    }

    /** True for {@code done} and {@code canceled}: nothing will ever change the transaction again. */
    public boolean isTerminal() {
        return this == DONE || this == CANCELED;
    }

    /** True if the stored state may change from this state to {@code next}. */
    public boolean canMoveTo(TransactionState next) {
        return ALLOWED.get(this).contains(next);
    }

    /** Reads a stored state, accepting the tutorial's older spellings and any letter case. */
    public static Optional<TransactionState> parse(String value) {
        if (value == null) {
            return Optional.empty();
        }
        String lower = value.toLowerCase(Locale.ROOT);
        for (TransactionState state : values()) {
            if (state.spellings.contains(lower)) {
                return Optional.of(state);
            }
        }
        return Optional.empty();
    }

    /** The non-terminal states, in protocol order. */
    public static List<TransactionState> open() {
        return List.of(INITIAL, PENDING, APPLIED, CANCELING);
    }
}
