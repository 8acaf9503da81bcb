package io.mongo2pc;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Options of one interactive transaction ({@link TransactionManager#transact(TransactionOptions, TransactionBody)}):
 * its id (the caller's makes it idempotent: run again, it returns the first run's result and applies
 * nothing twice) and how long it may run attempts after conflicts before
 * {@link TransactionConflictException} (default 15 s). Immutable; built by {@link #builder()}, each
 * value checked when set.
 */
public final class TransactionOptions {
    /** The default timeout: attempts run again after conflicts for at most this long. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(15);

    private static final TransactionOptions DEFAULTS = new Builder().build();

    private final Object id;
    private final Duration timeout;

    private TransactionOptions(Builder builder) {
        this.id = builder.id;
        this.timeout = builder.timeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** No id (the manager makes one), the default timeout. */
    public static TransactionOptions defaults() {
        return DEFAULTS;
    }

    /** The caller's transaction id, if given. */
    public Optional<Object> id() {
        return Optional.ofNullable(id);
    }

    public Duration timeout() {
        return timeout;
    }

    @Override
    public String toString() {
        return "TransactionOptions[id=" + id + ", timeout=" + timeout + "]";
    }

    /** Builds {@link TransactionOptions}; not thread-safe. */
    public static final class Builder {
        private Object id;
        private Duration timeout = DEFAULT_TIMEOUT;

        private Builder() { }

        /** The transaction's id: a non-empty string, an integer or an ObjectId. */
        public Builder id(Object id) {
            Objects.requireNonNull(id, "id");
            DocumentRef.requirePlainId(id, "transaction id");
            this.id = id;
            return this;
        }

        /** How long attempts may run again after conflicts; positive. */
        public Builder timeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        public TransactionOptions build() {
            return new TransactionOptions(this);
        }
    }
}
