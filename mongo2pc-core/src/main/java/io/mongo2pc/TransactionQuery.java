package io.mongo2pc;

import io.mongo2pc.internal.admin.ListCursor;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Which stored transactions {@link TransactionManager#list} returns, newest first (most recently
 * changed first): filters, a page size, and where the page starts. Built by {@link #builder()};
 * every setter checks its value and names it when refusing. Immutable and thread-safe.
 *
 * <pre>{@code
 * TransactionQuery stuck = TransactionQuery.builder()
 *         .state(TransactionState.PENDING).state(TransactionState.CANCELING)
 *         .olderThan(Duration.ofMinutes(5)).limit(20).build();
 * TransactionPage page = tm.list(stuck);
 * while (page.more()) {
 *     page = tm.list(stuck.after(page.next()));
 * }
 * }</pre>
 */
public final class TransactionQuery {
    /** The page size unless set otherwise. */
    public static final int DEFAULT_LIMIT = 50;
    /** The largest page. */
    public static final int MAX_LIMIT = 1000;

    private final Set<TransactionState> states;
    private final Duration olderThan;
    private final String owner;
    private final String application;
    private final int limit;
    private final String after;
    private final Instant changedFrom;
    private final Instant changedTo;
    private final Object touching;

    private TransactionQuery(Builder b, String after) {
        this.states = Collections.unmodifiableSet(b.states.isEmpty() ? EnumSet.noneOf(TransactionState.class) : EnumSet.copyOf(b.states));
        this.olderThan = b.olderThan;
        this.owner = b.owner;
        this.application = b.application;
        this.limit = b.limit;
        this.after = after;
        this.changedFrom = b.changedFrom;
        this.changedTo = b.changedTo;
        this.touching = b.touching;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Every transaction, the first {@value #DEFAULT_LIMIT}. */
    public static TransactionQuery all() {
        return builder().build();
    }

    /** The states asked for; empty: every state. */
    public Set<TransactionState> states() {
        return states;
    }

    /** Only transactions unchanged for at least this long (server clock); null: any age. */
    public Duration olderThan() {
        return olderThan;
    }

    /** Only transactions of this owner (exactly as stored); null: any. */
    public String owner() {
        return owner;
    }

    /** Only transactions of this application (the tutorial's {@code application} field); null: any. */
    public String application() {
        return application;
    }

    /** The most transactions in one page. */
    public int limit() {
        return limit;
    }

    /** Where the page starts: {@link TransactionPage#next()} of the page before; null: the newest. */
    public String after() {
        return after;
    }

    /** Only transactions last changed at or after this time (server clock); null: any. */
    public Instant changedFrom() {
        return changedFrom;
    }

    /** Only transactions last changed before this time (server clock); null: any. */
    public Instant changedTo() {
        return changedTo;
    }

    /** Only transactions with an operation on a document of this {@code _id} (in any collection); null: any. */
    public Object touching() {
        return touching;
    }

    /**
     * This query, starting after {@code cursor} ({@link TransactionPage#next()} of a page of it).
     * Throws {@link IllegalArgumentException} for text that is not such a cursor.
     */
    public TransactionQuery after(String cursor) {
        Builder b = new Builder();
        b.states.addAll(states);
        b.olderThan = olderThan;
        b.owner = owner;
        b.application = application;
        b.limit = limit;
        b.changedFrom = changedFrom;
        b.changedTo = changedTo;
        b.touching = touching;
        return b.after(cursor).build();
    }

    @Override
    public String toString() {
        return "TransactionQuery{states=" + states + ", olderThan=" + olderThan + ", owner=" + owner + ", application="
                + application + ", limit=" + limit + ", after=" + after + ", changedFrom=" + changedFrom + ", changedTo="
                + changedTo + ", touching=" + touching + "}";
    }

    /** Builds a {@link TransactionQuery}. Not thread-safe. */
    public static final class Builder {
        private final Set<TransactionState> states = EnumSet.noneOf(TransactionState.class);
        private Duration olderThan;
        private String owner;
        private String application;
        private int limit = DEFAULT_LIMIT;
        private String after;
        private Instant changedFrom;
        private Instant changedTo;
        private Object touching;

        private Builder() { }

        /** Adds a state to those listed (repeatable); none added: every state. */
        public Builder state(TransactionState state) {
            states.add(Objects.requireNonNull(state, "state"));
            return this;
        }

        /** Only transactions unchanged for at least {@code olderThan}, by the database server's clock. */
        public Builder olderThan(Duration olderThan) {
            if (olderThan == null || olderThan.isNegative()) {
                throw new IllegalArgumentException("older-than must be zero or positive, got " + olderThan);
            }
            this.olderThan = olderThan;
            return this;
        }

        /** Only transactions held by {@code owner}, as stored (e.g. {@code payments@4242@host/1a2b3c4d}). */
        public Builder owner(String owner) {
            this.owner = nonBlank("owner", owner);
            return this;
        }

        /** Only transactions of {@code application} (the tutorial's {@code application} field). */
        public Builder application(String application) {
            this.application = nonBlank("application", application);
            return this;
        }

        /** The most transactions in one page, 1 to {@value #MAX_LIMIT}. Default {@value #DEFAULT_LIMIT}. */
        public Builder limit(int limit) {
            if (limit < 1 || limit > MAX_LIMIT) {
                throw new IllegalArgumentException("limit must be between 1 and " + MAX_LIMIT + ", got " + limit);
            }
            this.limit = limit;
            return this;
        }

        /** Starts after {@code cursor}, the {@link TransactionPage#next()} of the page before; null: the newest. */
        public Builder after(String cursor) {
            if (cursor != null) {
                ListCursor.decode(cursor); // refuses what no page gave, before any read
            }
            this.after = cursor;
            return this;
        }

        /**
         * Only transactions last changed in {@code [from, to)} by the database server's clock (either
         * null: open on that side). A transaction's last change is its {@code lastModified}.
         */
        public Builder changedBetween(Instant from, Instant to) {
            if (from != null && to != null && !from.isBefore(to)) {
                throw new IllegalArgumentException("the time range must start before it ends, got from " + from + " to " + to);
            }
            this.changedFrom = from;
            this.changedTo = to;
            return this;
        }

        /**
         * Only transactions with an operation on a document whose {@code _id} is {@code documentId},
         * in any collection: which transactions touched account {@code bob}. Transfers are found by
         * their source and destination, other transactions by their stored operations.
         */
        public Builder touching(Object documentId) {
            if (documentId == null || documentId instanceof String text && text.isBlank()) {
                throw new IllegalArgumentException("the document's id must not be empty");
            }
            DocumentRef.requirePlainId(documentId, "document id");
            this.touching = documentId;
            return this;
        }

        public TransactionQuery build() {
            return new TransactionQuery(this, after);
        }

        private static String nonBlank(String what, String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(what + " must not be empty");
            }
            return value;
        }
    }
}
