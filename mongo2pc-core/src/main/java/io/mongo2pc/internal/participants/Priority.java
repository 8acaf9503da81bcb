package io.mongo2pc.internal.participants;

import io.mongo2pc.internal.format.EntryName;
import org.bson.Document;

import java.time.Instant;
import java.util.Comparator;
import java.util.Date;

/**
 * Which of two open transactions gives way when one meets the other's hold (docs/CONFLICTS.md):
 * wait-die. Every transaction has a priority fixed when it starts, {@code since} (a lower bound of
 * the database server's clock at its first attempt) with its {@code nonce} to break ties; the
 * earlier is <i>older</i>. Every entry and lock a transaction writes carries its {@code since} as
 * {@code p}. A transaction that meets the hold of an older one <i>yields</i> (releases everything
 * it holds, waits for the older one, then prepares again, keeping its priority); one that meets only
 * younger holders <i>waits</i>, holding what it has. Waits then only ever go from older to younger
 * transactions, so no two transactions wait for each other, and the oldest in a conflict never
 * yields, so one of them always gets through. A hold without {@code p} (the tutorial's rules, or a
 * version before this rule) counts as older than every transaction: its owner does not yield.
 * Interactive transactions keep the {@code since} of their first attempt, each attempt with its
 * own nonce. Public for the state, tworound and interactive packages. Immutable.
 *
 * @param since when the transaction first started (server time); kept across its attempts
 * @param nonce the transaction's nonce, to order two that started at the same time
 */
public record Priority(Instant since, String nonce) implements Comparable<Priority> {
    /** The field of an entry or lock that holds {@link #since}. */
    public static final String FIELD = "p";

    private static final Comparator<Priority> ORDER = Comparator.comparing(Priority::since)
            .thenComparing(Priority::nonce, Comparator.nullsFirst(Comparator.naturalOrder()));

    /** The priority written on {@code hold} (an entry or a lock: its {@code p} and {@code n}), or null if it has none. */
    public static Priority of(Document hold) {
        return hold != null && hold.get(FIELD) instanceof Date since && hold.get(EntryName.NONCE) instanceof String nonce
                ? new Priority(since.toInstant(), nonce) : null;
    }

    /** {@link #since} as written into an entry or lock. */
    public Date written() {
        return Date.from(since);
    }

    /** True if a transaction of this priority gives way to {@code holder}: the holder is older, or carries no priority. */
    public boolean yieldsTo(Priority holder) {
        return holder == null || ORDER.compare(holder, this) < 0;
    }

    @Override
    public int compareTo(Priority other) {
        return ORDER.compare(this, other);
    }
}
