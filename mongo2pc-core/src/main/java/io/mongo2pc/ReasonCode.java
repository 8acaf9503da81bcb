package io.mongo2pc;

import java.util.Locale;
import java.util.Optional;

/**
 * Why a transaction was canceled, for a program to act on (the {@code reason} text is for people).
 * Stored as {@code code} beside {@code reason} in the transaction document, so any process that
 * reads the transaction gets it. Immutable.
 */
public enum ReasonCode {
    /**
     * A debit's funds check refused it: the guard {@code {field: {$gte: amount}}} of an increment by
     * {@code -amount}, of the tutorial's {@code balance} field or of an operation flagged
     * {@link Operation.Flag#DEBIT}. The same check of another field (a stock count) is {@link #GUARD_FAILED}.
     */
    INSUFFICIENT_FUNDS,
    /** A guard did not hold, or the server refused the change (e.g. an increment of a text field). */
    GUARD_FAILED,
    /** The document of an update, delete or increment does not exist. */
    DOCUMENT_MISSING,
    /** The document of an insert exists already. */
    DOCUMENT_EXISTS,
    /** Another transaction held the document for longer than the conflict timeout. */
    CONFLICT,
    /** An operator canceled it ({@link TransactionManager#cancel}). */
    CANCELED_BY_OPERATOR,
    /** The document carried as many markers as allowed for longer than the conflict timeout. */
    TIMED_OUT;

    /** Reads a stored code; empty for none or one this version does not know. */
    public static Optional<ReasonCode> parse(Object stored) {
        if (stored instanceof String s) {
            try {
                return Optional.of(valueOf(s.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }
}
