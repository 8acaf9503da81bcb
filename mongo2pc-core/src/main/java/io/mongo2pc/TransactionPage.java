package io.mongo2pc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * One page of {@link TransactionManager#list}: transactions newest first (most recently changed
 * first). Immutable.
 *
 * @param transactions the transactions of this page
 * @param more         true if more transactions match after this page
 * @param next         the cursor of the next page ({@link TransactionQuery#after(String)}), null when none
 * @param asOf         the database server's time when the page was read: ages are measured from it
 */
public record TransactionPage(List<TransactionView> transactions, boolean more, String next, Instant asOf) {

    public TransactionPage {
        transactions = List.copyOf(transactions);
    }

    /** How long {@code transaction} has been unchanged at {@link #asOf()}; null if it was never stamped. */
    public Duration age(TransactionView transaction) {
        return ageOf(transaction, asOf);
    }

    /** How long {@code transaction} has been unchanged at {@code now} (never negative); null if it was never stamped. */
    public static Duration ageOf(TransactionView transaction, Instant now) {
        if (transaction.lastModified() == null || now == null) {
            return null;
        }
        Duration age = Duration.between(transaction.lastModified(), now);
        return age.isNegative() ? Duration.ZERO : age;
    }
}
