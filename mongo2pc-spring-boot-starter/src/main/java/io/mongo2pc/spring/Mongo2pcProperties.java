package io.mongo2pc.spring;

import io.mongo2pc.TransactionManagerBuilder;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code mongo2pc.*} settings: one for every setting of {@link TransactionManagerBuilder},
 * plus the starter's own (bank, worker, metrics, tracing). Values are checked by the builder when
 * the manager is built, and a bad one stops the application with the property's name and value.
 */
@ConfigurationProperties("mongo2pc")
public class Mongo2pcProperties {

    /** How a transaction is finished after its commit point. */
    public enum Finishing {
        /** {@code run} releases the markers and marks the transaction done before it returns. */
        INLINE,
        /** {@code run} returns at the commit point; one thread of the manager finishes many transactions per request. */
        BACKGROUND
    }

    /** Database of the transactions collection and of the bank's accounts. */
    private String database = "mongo2pc";

    /** This application's name, stored in the tutorial's 'application' field of each transaction. */
    private String application = "mongo2pc";

    /** Name of the coordinator collection. */
    private String transactionsCollection = "transactions";

    /** How long an owner may go without changing its transaction before any process may take it over (server clock). */
    private Duration lease = Duration.ofSeconds(30);

    /** How far the database servers' clocks may disagree; at most half the lease. Default: 1s, or half a shorter lease. */
    private Duration maxClockSkew;

    /** How long one step is retried through database errors before the outcome is left to recovery. */
    private Duration retryTimeout = Duration.ofSeconds(30);

    /** How long a write waits for a busy document, and a read of several documents for one consistent cut. */
    private Duration conflictTimeout = Duration.ofSeconds(5);

    /** The most operations one transaction may have. */
    private int maxOperations = 100;

    /** The most markers (open transactions) one document may carry; more wait. */
    private int maxMarkers = 1000;

    /** Write concern of every write: majority, w1, w2, w3, acknowledged or journaled (unacknowledged is refused). */
    private String writeConcern = "majority";

    /** Read concern of every read: majority, local, linearizable, snapshot, available or default (the server's). */
    private String readConcern = "majority";

    /** The most combined write requests out at once per collection (group commit); keep below the pool's maxPoolSize. */
    private int combinedRequestsInFlight = 16;

    /** Whether 'run' returns at the commit point, the rest finished by one thread (background), or done (inline). */
    private Finishing finishing = Finishing.BACKGROUND;

    /**
     * Which rules new transactions follow. Unset (the default): the two-round commit for every transaction, and the
     * tutorial's rules for one whose id no two-round entry can be named after; true: the two-round commit only, refusing
     * such an id; false: the tutorial's rules for everything.
     */
    private Boolean twoRoundCommit;

    /** With background finishing: how long a finisher round waits for more committed transactions after its first (at most 10s). */
    private Duration finishLinger = Duration.ofMillis(5);

    /** The least time between two sweeps for markers without a transaction document (recovery passes). Default: the lease. */
    private Duration sweepPeriod;

    /**
     * Further MongoDB deployments operations may reach, by name: mongo2pc.targets.shop=mongodb://host/.
     * 'default' (the transactions collection) is the application's MongoClient unless given here.
     */
    private Map<String, String> targets = new LinkedHashMap<>();

    private final Bank bank = new Bank();
    private final Worker worker = new Worker();
    private final Metrics metrics = new Metrics();
    private final Tracing tracing = new Tracing();
    private final Transactional transactional = new Transactional();

    /** Spring's transactions on mongo2pc: mongo2pcTransactionManager (@Transactional, TransactionTemplate). */
    public static class Transactional {
        /** How long a method that gives no timeout of its own runs again after conflicts before it fails. */
        private Duration timeout = Duration.ofSeconds(15);

        public Duration getTimeout() { return timeout; }
        public void setTimeout(Duration timeout) { this.timeout = timeout; }
    }

    /** The transfer and payment API beans. */
    public static class Bank {
        /** Whether to define Bank and Payments beans (transfers between accounts, order payments). */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** An in-process worker: claims queued transactions and recovers stale ones. */
    public static class Worker {
        /** Whether to run worker threads in this application (stopped gracefully at shutdown). */
        private boolean enabled;

        /** Worker threads, each claiming and running one queued transaction at a time. */
        private int threads = 1;

        /** One recovery pass (stale transactions of any process) per period. */
        private Duration scanPeriod = Duration.ofMillis(500);

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public int getThreads() { return threads; }
        public void setThreads(int threads) { this.threads = threads; }
        public Duration getScanPeriod() { return scanPeriod; }
        public void setScanPeriod(Duration scanPeriod) { this.scanPeriod = scanPeriod; }
    }

    /** Micrometer meters (when the application has a MeterRegistry). */
    public static class Metrics {
        /** Whether to record mongo2pc's meters in the application's MeterRegistry. */
        private boolean enabled = true;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
    }

    /** Each transaction as a Micrometer Observation (when the application has an ObservationRegistry). */
    public static class Tracing {
        /** Whether to observe each transaction (a span per transaction with Micrometer Tracing). */
        private boolean enabled = true;

        /** An observation this process stopped following (lease lost, queued for another process) ends as unfinished after this. */
        private Duration maxAge = Duration.ofMinutes(10);

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public Duration getMaxAge() { return maxAge; }
        public void setMaxAge(Duration maxAge) { this.maxAge = maxAge; }
    }

    public String getDatabase() { return database; }
    public void setDatabase(String database) { this.database = database; }
    public String getApplication() { return application; }
    public void setApplication(String application) { this.application = application; }
    public String getTransactionsCollection() { return transactionsCollection; }
    public void setTransactionsCollection(String transactionsCollection) { this.transactionsCollection = transactionsCollection; }
    public Duration getLease() { return lease; }
    public void setLease(Duration lease) { this.lease = lease; }
    public Duration getMaxClockSkew() { return maxClockSkew; }
    public void setMaxClockSkew(Duration maxClockSkew) { this.maxClockSkew = maxClockSkew; }
    public Duration getRetryTimeout() { return retryTimeout; }
    public void setRetryTimeout(Duration retryTimeout) { this.retryTimeout = retryTimeout; }
    public Duration getConflictTimeout() { return conflictTimeout; }
    public void setConflictTimeout(Duration conflictTimeout) { this.conflictTimeout = conflictTimeout; }
    public int getMaxOperations() { return maxOperations; }
    public void setMaxOperations(int maxOperations) { this.maxOperations = maxOperations; }
    public int getMaxMarkers() { return maxMarkers; }
    public void setMaxMarkers(int maxMarkers) { this.maxMarkers = maxMarkers; }
    public String getWriteConcern() { return writeConcern; }
    public void setWriteConcern(String writeConcern) { this.writeConcern = writeConcern; }
    public String getReadConcern() { return readConcern; }
    public void setReadConcern(String readConcern) { this.readConcern = readConcern; }
    public int getCombinedRequestsInFlight() { return combinedRequestsInFlight; }
    public void setCombinedRequestsInFlight(int combinedRequestsInFlight) { this.combinedRequestsInFlight = combinedRequestsInFlight; }
    public Finishing getFinishing() { return finishing; }
    public void setFinishing(Finishing finishing) { this.finishing = finishing; }
    public Duration getFinishLinger() { return finishLinger; }
    public void setFinishLinger(Duration finishLinger) { this.finishLinger = finishLinger; }
    public Boolean getTwoRoundCommit() { return twoRoundCommit; }
    public void setTwoRoundCommit(Boolean twoRoundCommit) { this.twoRoundCommit = twoRoundCommit; }
    public Duration getSweepPeriod() { return sweepPeriod; }
    public void setSweepPeriod(Duration sweepPeriod) { this.sweepPeriod = sweepPeriod; }
    public Map<String, String> getTargets() { return targets; }
    public void setTargets(Map<String, String> targets) { this.targets = targets; }
    public Bank getBank() { return bank; }
    public Worker getWorker() { return worker; }
    public Metrics getMetrics() { return metrics; }
    public Tracing getTracing() { return tracing; }
    public Transactional getTransactional() { return transactional; }
}
