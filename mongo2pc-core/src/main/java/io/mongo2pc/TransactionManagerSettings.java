package io.mongo2pc;

import io.mongo2pc.spi.Clock;
import io.mongo2pc.spi.CrashHook;
import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The immutable settings a {@link TransactionManager} was built with: the one value its engine
 * reads them from. Made by {@link TransactionManagerBuilder}, which documents each setting and its
 * default. Immutable and thread-safe.
 */
public final class TransactionManagerSettings {
    /** Clock skew allowed between database servers unless set otherwise (or half a shorter lease). */
    public static final Duration DEFAULT_MAX_CLOCK_SKEW = Duration.ofSeconds(1);

    private final Map<String, MongoClient> targets;
    private final String database;
    private final String transactionsCollection;
    private final String application;
    private final String owner;
    private final Duration lease;
    private final Duration maxClockSkew;
    private final Duration retryTimeout;
    private final Duration conflictTimeout;
    private final int maxOperations;
    private final int maxMarkers;
    private final WriteConcern writeConcern;
    private final ReadConcern readConcern;
    private final CrashHook crashHook;
    private final Clock clock;
    private final TransactionMetrics metrics;
    private final List<TransactionCodec> codecs;
    private final Supplier<Object> ids;
    private final boolean finishInBackground;
    private final boolean twoRoundCommit;
    private final boolean tutorialRulesFallback;
    private final boolean commitInsert;
    private final int combinedRequestsInFlight;
    private final Duration finishLinger;
    private final Duration sweepPeriod;

    TransactionManagerSettings(TransactionManagerBuilder b) {
        this.targets = Map.copyOf(b.targets);
        this.database = b.database;
        this.transactionsCollection = b.transactionsCollection;
        this.application = b.application;
        this.owner = b.application + "@" + ManagementFactory.getRuntimeMXBean().getName() + "/"
                + UUID.randomUUID().toString().substring(0, 8);
        this.lease = b.lease;
        if (b.maxClockSkew != null && b.maxClockSkew.compareTo(b.lease.dividedBy(2)) > 0) {
            throw new IllegalArgumentException("maxClockSkew " + b.maxClockSkew.toMillis() + "ms is more than half the lease "
                    + b.lease.toMillis() + "ms: an owner would have too little of its lease left to write in;"
                    + " lengthen the lease or allow less skew");
        }
        // the default skew shrinks with a short lease
        this.maxClockSkew = b.maxClockSkew != null ? b.maxClockSkew
                : DEFAULT_MAX_CLOCK_SKEW.compareTo(b.lease.dividedBy(2)) > 0 ? b.lease.dividedBy(2) : DEFAULT_MAX_CLOCK_SKEW;
        this.retryTimeout = b.retryTimeout;
        this.conflictTimeout = b.conflictTimeout;
        this.maxOperations = b.maxOperations;
        this.maxMarkers = b.maxMarkers;
        this.writeConcern = b.writeConcern;
        this.readConcern = b.readConcern;
        this.crashHook = b.crashHook;
        this.clock = b.clock;
        this.metrics = b.metrics;
        this.codecs = List.copyOf(b.codecs);
        this.ids = b.ids;
        this.finishInBackground = b.finishInBackground;
        this.twoRoundCommit = b.twoRoundCommit == null || b.twoRoundCommit;
        this.tutorialRulesFallback = b.twoRoundCommit == null;
        this.commitInsert = b.commitInsert;
        this.combinedRequestsInFlight = b.combinedRequestsInFlight;
        this.finishLinger = b.finishLinger;
        this.sweepPeriod = b.sweepPeriod != null ? b.sweepPeriod : b.lease;
    }

    public String database() { return database; }
    public String transactionsCollection() { return transactionsCollection; }
    public String application() { return application; }
    /** This instance's owner name: application, process and a random suffix. */
    public String owner() { return owner; }
    public Duration lease() { return lease; }
    /** Clock skew allowed between database servers (at most half the lease). */
    public Duration maxClockSkew() { return maxClockSkew; }
    public Duration retryTimeout() { return retryTimeout; }
    public Duration conflictTimeout() { return conflictTimeout; }
    public int maxOperations() { return maxOperations; }
    public int maxMarkers() { return maxMarkers; }
    public boolean finishInBackground() { return finishInBackground; }
    /** True if new transactions follow the two-round commit ({@code protocol: 2}) where they can (see {@link #tutorialRulesFallback}). */
    public boolean twoRoundCommit() { return twoRoundCommit; }
    /**
     * True if a transaction the two-round commit cannot run follows the tutorial's rules instead
     * of being refused: the default, when {@code twoRoundCommit} was not set.
     */
    public boolean tutorialRulesFallback() { return tutorialRulesFallback; }
    /** True if the two-round commit's commit point is the insert of its document, already applied. */
    public boolean commitInsert() { return commitInsert; }
    /** The most combined write requests out at once per collection (group commit). */
    public int combinedRequestsInFlight() { return combinedRequestsInFlight; }
    public WriteConcern writeConcern() { return writeConcern; }
    public ReadConcern readConcern() { return readConcern; }
    public MongoClient target(String name) { return targets.get(name); }
    /** Every target by name ({@code "default"} among them). */
    public Map<String, MongoClient> targets() { return targets; }
    /** How long a round of the background finisher waits for more committed transactions after its first. */
    public Duration finishLinger() { return finishLinger; }
    /** The least time between two sweeps of {@code recover} for markers without a transaction document (default: the lease). */
    public Duration sweepPeriod() { return sweepPeriod; }
    public CrashHook crashHook() { return crashHook; }
    /** The local clock of this manager's waits (retries, busy documents, awaited outcomes); not of leases. */
    public Clock clock() { return clock; }
    public TransactionMetrics metrics() { return metrics; }
    /** The readers of transaction documents without mongo2pc's {@code ops}, in the order registered. */
    public List<TransactionCodec> codecs() { return codecs; }
    /** Makes ids of new transactions. */
    public Supplier<Object> ids() { return ids; }
}
