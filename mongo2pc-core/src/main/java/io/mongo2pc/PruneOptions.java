package io.mongo2pc;

/**
 * How {@link TransactionManager#prune(java.time.Duration, PruneOptions)} prunes finished
 * transactions. Built by {@link #builder()}; {@link #defaults()}: no force, canceled transactions
 * kept, ids kept, for real. Immutable and thread-safe.
 *
 * <pre>{@code
 * PruneResult wouldBe = tm.prune(Duration.ofDays(7), PruneOptions.builder().dryRun(true).build());
 * PruneResult done = tm.prune(Duration.ofDays(7), PruneOptions.builder().includeCanceled(true).build());
 * }</pre>
 */
public final class PruneOptions {
    private static final PruneOptions DEFAULTS = builder().build();

    private final boolean force;
    private final boolean includeCanceled;
    private final boolean dryRun;
    private final boolean forgetIds;

    private PruneOptions(Builder b) {
        this.force = b.force;
        this.includeCanceled = b.includeCanceled;
        this.dryRun = b.dryRun;
        this.forgetIds = b.forgetIds;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** No force, canceled transactions kept, ids kept, for real. */
    public static PruneOptions defaults() {
        return DEFAULTS;
    }

    /** True if an age below the longest lease plus the clock-skew margin is accepted. */
    public boolean force() {
        return force;
    }

    /** True if canceled transactions (the record of what was refused, and why) are pruned too. */
    public boolean includeCanceled() {
        return includeCanceled;
    }

    /** True if nothing is written: the result counts what would be pruned. */
    public boolean dryRun() {
        return dryRun;
    }

    /** True if the ids go too (no stub is kept): a caller may then run such an id again as a new transaction. */
    public boolean forgetIds() {
        return forgetIds;
    }

    @Override
    public String toString() {
        return "PruneOptions{force=" + force + ", includeCanceled=" + includeCanceled + ", dryRun=" + dryRun
                + ", forgetIds=" + forgetIds + "}";
    }

    /** Builds {@link PruneOptions}. Not thread-safe. */
    public static final class Builder {
        private boolean force;
        private boolean includeCanceled;
        private boolean dryRun;
        private boolean forgetIds;

        private Builder() { }

        /**
         * Accepts an age below the longest lease of the transactions' owners plus the clock-skew margin.
         * A younger finished transaction may still meet its owner (its last state change, a late copy of
         * one of its writes); what that owner is told stays true, but its document is gone early.
         */
        public Builder force(boolean force) {
            this.force = force;
            return this;
        }

        /** Prunes canceled transactions too; by default they are kept, as the record of what was refused and why. */
        public Builder includeCanceled(boolean includeCanceled) {
            this.includeCanceled = includeCanceled;
            return this;
        }

        /** Writes nothing: counts what would be pruned, by state (the same checks as for real). */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        /**
         * Deletes the transactions outright, and the stubs earlier prunes kept, instead of keeping a
         * stub of each (its id and outcome): their ids may then be run again as new transactions.
         */
        public Builder forgetIds(boolean forgetIds) {
            this.forgetIds = forgetIds;
            return this;
        }

        public PruneOptions build() {
            return new PruneOptions(this);
        }
    }
}
