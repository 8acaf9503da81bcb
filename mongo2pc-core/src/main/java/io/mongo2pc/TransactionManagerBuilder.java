package io.mongo2pc;

import io.mongo2pc.spi.Clock;
import io.mongo2pc.spi.CrashHook;
import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import org.bson.types.ObjectId;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Builds a {@link TransactionManager} ({@link TransactionManager#builder()}); each setter checks its
 * value and names it when refusing, and says its default. Not thread-safe: one thread builds.
 */
public final class TransactionManagerBuilder {
    /** See {@link #combinedRequestsInFlight(int)}. */
    public static final int DEFAULT_COMBINED_REQUESTS_IN_FLIGHT = 16;
    /** See {@link #finishLinger(Duration)}. */
    public static final Duration DEFAULT_FINISH_LINGER = Duration.ofMillis(5);

    final Map<String, MongoClient> targets = new LinkedHashMap<>();
    String database = "mongo2pc";
    String transactionsCollection = "transactions";
    String application = "mongo2pc";
    Duration lease = Duration.ofSeconds(30);
    /** Null: the default, {@link TransactionManagerSettings#DEFAULT_MAX_CLOCK_SKEW} or half the lease, whichever is less. */
    Duration maxClockSkew;
    Duration retryTimeout = Duration.ofSeconds(30);
    Duration conflictTimeout = Duration.ofSeconds(5);
    int maxOperations = 100;
    int maxMarkers = 1000;
    WriteConcern writeConcern = WriteConcern.MAJORITY;
    ReadConcern readConcern = ReadConcern.MAJORITY;
    CrashHook crashHook = CrashHook.NONE;
    Clock clock = Clock.SYSTEM;
    TransactionMetrics metrics = TransactionMetrics.NONE;
    final List<TransactionCodec> codecs = new ArrayList<>();
    Supplier<Object> ids = ObjectId::new;
    boolean finishInBackground = true;
    /** Null: not set, the default (the two-round commit, the tutorial's rules for what it cannot run). */
    Boolean twoRoundCommit;
    boolean commitInsert = true;
    int combinedRequestsInFlight = DEFAULT_COMBINED_REQUESTS_IN_FLIGHT;
    Duration finishLinger = DEFAULT_FINISH_LINGER;
    /** Null: the default, the lease. */
    Duration sweepPeriod;

    TransactionManagerBuilder() { }

    /** A named MongoClient operations may reach; {@code "default"} also holds the transactions collection. */
    public TransactionManagerBuilder target(String name, MongoClient client) {
        if (name == null || name.isBlank() || name.contains("/")) {
            throw new IllegalArgumentException("target name must be non-blank without '/', got '" + name + "'");
        }
        targets.put(name, Objects.requireNonNull(client, "client of target " + name));
        return this;
    }

    /** Database of the transactions collection. Default {@code mongo2pc}. */
    public TransactionManagerBuilder database(String database) {
        String problem = DocumentRef.databaseNameProblem(database);
        if (problem != null) {
            throw new IllegalArgumentException("invalid database name '" + database + "': " + problem);
        }
        this.database = database;
        return this;
    }

    /** Name of the transactions collection. Default {@code transactions}. */
    public TransactionManagerBuilder transactionsCollection(String name) {
        String problem = DocumentRef.collectionNameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("invalid collection name '" + name + "': " + problem);
        }
        this.transactionsCollection = name;
        return this;
    }

    /** This application's name, stored in the tutorial's {@code application} field. Default {@code mongo2pc}. */
    public TransactionManagerBuilder application(String application) {
        if (application == null || application.isBlank() || application.length() > 100) {
            throw new IllegalArgumentException("application name must be 1 to 100 characters, got '" + application + "'");
        }
        this.application = application;
        return this;
    }

    /**
     * How long an owner may go without changing its transaction before any process may take it
     * over. Judged by the database server's clock. Default 30s.
     */
    public TransactionManagerBuilder lease(Duration lease) {
        if (lease == null || lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease must be positive, got " + lease);
        }
        this.lease = lease;
        return this;
    }

    /**
     * How far the clocks of the database servers (targets, replica-set members) may disagree. An
     * owner's writes are refused by the server from lease minus this after its last stamp.
     * Default 1s, or half the lease if that is less; {@code build()} refuses more than half the
     * lease.
     */
    public TransactionManagerBuilder maxClockSkew(Duration maxClockSkew) {
        if (maxClockSkew == null || maxClockSkew.isNegative()) {
            throw new IllegalArgumentException("maxClockSkew must be zero or positive, got " + maxClockSkew);
        }
        this.maxClockSkew = maxClockSkew;
        return this;
    }

    /**
     * How long a write waits for a busy document (full of markers) before the transaction
     * cancels, and how long {@code readCommitted(List)} tries to read its documents as one cut.
     * Default 5s.
     */
    public TransactionManagerBuilder conflictTimeout(Duration conflictTimeout) {
        if (conflictTimeout == null || conflictTimeout.isNegative()) {
            throw new IllegalArgumentException("conflictTimeout must be zero or positive, got " + conflictTimeout);
        }
        this.conflictTimeout = conflictTimeout;
        return this;
    }

    /** The most markers (open transactions) one document may carry; more wait. Default 1000. */
    public TransactionManagerBuilder maxMarkers(int maxMarkers) {
        if (maxMarkers < 1 || maxMarkers > 100_000) {
            throw new IllegalArgumentException("maxMarkers must be between 1 and 100000, got " + maxMarkers);
        }
        this.maxMarkers = maxMarkers;
        return this;
    }

    /** How long one step is retried through database errors before the outcome is left to recovery. Default 30s. */
    public TransactionManagerBuilder retryTimeout(Duration retryTimeout) {
        if (retryTimeout == null || retryTimeout.isNegative()) {
            throw new IllegalArgumentException("retryTimeout must be zero or positive, got " + retryTimeout);
        }
        this.retryTimeout = retryTimeout;
        return this;
    }

    /** The most operations one transaction may have. Default 100. */
    public TransactionManagerBuilder maxOperations(int maxOperations) {
        if (maxOperations < 1 || maxOperations > 10_000) {
            throw new IllegalArgumentException("maxOperations must be between 1 and 10000, got " + maxOperations);
        }
        this.maxOperations = maxOperations;
        return this;
    }

    /** Write concern of every write. Default majority. */
    public TransactionManagerBuilder writeConcern(WriteConcern writeConcern) {
        Objects.requireNonNull(writeConcern, "writeConcern");
        if (!writeConcern.isAcknowledged()) {
            throw new IllegalArgumentException("an unacknowledged write concern cannot carry a transaction: " + writeConcern);
        }
        this.writeConcern = writeConcern;
        return this;
    }

    /** Read concern of every read. Default majority. */
    public TransactionManagerBuilder readConcern(ReadConcern readConcern) {
        this.readConcern = Objects.requireNonNull(readConcern, "readConcern");
        return this;
    }

    /** Hook called at every crash point; tests stop the protocol with it. Default: none. */
    public TransactionManagerBuilder crashHook(CrashHook crashHook) {
        this.crashHook = Objects.requireNonNull(crashHook, "crashHook");
        return this;
    }

    /**
     * The local clock of this manager's waits: retries up to {@code retryTimeout} and their backoff,
     * waits for busy documents up to {@code conflictTimeout}, awaited outcomes, pauses between
     * attempts of a consistent read. A test seam: a test passes a clock it moves itself, so a
     * timeout is reached without the test sleeping for it. Leases, staleness and takeovers are
     * judged by the database server's clock, never by this one. Default {@link Clock#SYSTEM}.
     */
    public TransactionManagerBuilder clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return this;
    }

    /** Receives metrics. Default: none. */
    public TransactionManagerBuilder metrics(TransactionMetrics metrics) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        return this;
    }

    /** Adds a reader for transaction documents without mongo2pc's {@code ops} (e.g. tutorial transfers). */
    public TransactionManagerBuilder codec(TransactionCodec codec) {
        codecs.add(Objects.requireNonNull(codec, "codec"));
        return this;
    }

    /** Makes ids of new transactions. Default: a new ObjectId. */
    public TransactionManagerBuilder ids(Supplier<Object> ids) {
        this.ids = Objects.requireNonNull(ids, "ids");
        return this;
    }

    /**
     * True (the default): {@code run} and {@code claimAndRun} return a committed transaction at its
     * commit point ({@code applied}: every operation in effect, only ever rolled forward) and one
     * thread of this manager releases its markers and moves it to {@code done}, many
     * transactions per request; {@link TransactionManager#close()} waits for it. At most 1,024
     * committed transactions (and at most half of {@code maxMarkers}) wait for that thread;
     * callers wait beyond. If the process dies first, anyone who reads one of its documents
     * committed, or recovery once the lease expires, finishes them. False: {@code run} returns
     * {@code done} (markers released) and the manager holds no thread.
     */
    public TransactionManagerBuilder finishInBackground(boolean finishInBackground) {
        this.finishInBackground = finishInBackground;
        return this;
    }

    /**
     * Which rules new transactions follow (docs/TWO-ROUND.md, docs/PROTOCOL.md). Not set (the
     * default): the two-round commit, where the transaction document and every prepare are sent at once, then
     * the commit, and increases take effect only after the commit point, so no guard and no
     * committed read ever relies on an increase that is not committed (inserts, updates, deletes and
     * queued transactions too: an update's change is applied before the commit point with its
     * before-image kept, so a refused update cancels); a transaction whose id no entry can be named
     * after (a custom id that is not a string, a whole number or an ObjectId) follows the
     * tutorial's rules instead, as its document records. {@code true}: the two-round commit only;
     * such a transaction is refused before anything is written, so that no credit of this manager
     * ever takes effect before its commit point. {@code false}: the tutorial's rules for every
     * transaction (a credit in effect from its apply). Every manager of this version recovers and
     * reads transactions of both rules, whatever this setting; older versions must not recover
     * transactions of the two-round commit.
     */
    public TransactionManagerBuilder twoRoundCommit(boolean twoRoundCommit) {
        this.twoRoundCommit = twoRoundCommit;
        return this;
    }

    /**
     * Where the two-round commit writes its transaction document (docs/TWO-ROUND.md, "The commit
     * insert"). {@code true} (the default): round 1 is the prepares alone and the commit point is
     * the document's first write, its insert already {@code applied}, which counts as committed
     * only if it ran before the owner's deadline; a transfer then costs one request fewer.
     * {@code false}: round 1 also inserts the document {@code pending}, and the commit is a
     * compare-and-set. Every manager of this version reads and recovers both; a version without
     * the commit insert's lateness rule must not share a transactions collection with a manager
     * that writes commit inserts.
     */
    public TransactionManagerBuilder commitInsert(boolean commitInsert) {
        this.commitInsert = commitInsert;
        return this;
    }

    /**
     * The most combined write requests one manager keeps out at once per collection. The writes
     * that concurrent transactions make to one collection share requests (group commit, see
     * docs/PROTOCOL.md): a thread that finds a request slot free sends its write at once, with
     * whatever others queued meanwhile; otherwise it queues and the next request carries it.
     * Up to this many are out while requests come back within twice the fastest recent one (a
     * round trip that is mostly network latency, which more requests share for free), fewer
     * while they come back slower (the server or this process is busy: more writes then share
     * each request, and the work per write falls). Each request out holds a connection of the
     * target's pool, so keep this below its {@code maxPoolSize} (the driver's default is 100)
     * divided by the collections written. Default {@value #DEFAULT_COMBINED_REQUESTS_IN_FLIGHT}.
     */
    public TransactionManagerBuilder combinedRequestsInFlight(int requests) {
        if (requests < 1 || requests > 1_000) {
            throw new IllegalArgumentException("combinedRequestsInFlight must be between 1 and 1000, got " + requests);
        }
        this.combinedRequestsInFlight = requests;
        return this;
    }

    /**
     * With {@link #finishInBackground(boolean)}: how long a round of the background finisher
     * waits for more committed transactions after its first, unless 128 are already waiting.
     * Longer makes fewer, larger requests (the finishing is off the callers' path, so this adds
     * nothing to a call's latency, only to how long markers stay). Default 5ms; at most 10s.
     */
    public TransactionManagerBuilder finishLinger(Duration linger) {
        if (linger == null || linger.isNegative() || linger.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new IllegalArgumentException("finishLinger must be between 0 and 10s, got " + linger);
        }
        this.finishLinger = linger;
        return this;
    }

    /**
     * The least time between two sweeps of this manager's {@code recover}: a sweep reads the
     * documents with markers in every participant collection the two-round commit recorded, to
     * find the markers of transactions whose document was never written (their owner died in its
     * first round), which no scan of the transactions collection finds. Such a marker can be
     * resolved only once its deadline (about a lease after it was written) is past, so sweeping
     * more often than once per lease finds little more, while each sweep reads every document with
     * markers. A process's first {@code recover} always sweeps (the CLI's {@code recover} does);
     * {@code Duration.ZERO} sweeps at every {@code recover}. Default: the lease; at most a day.
     */
    public TransactionManagerBuilder sweepPeriod(Duration period) {
        if (period == null || period.isNegative() || period.compareTo(Duration.ofDays(1)) > 0) {
            throw new IllegalArgumentException("sweepPeriod must be between 0 and 1 day, got " + period);
        }
        this.sweepPeriod = period;
        return this;
    }

    public TransactionManager build() {
        if (!targets.containsKey(DocumentRef.DEFAULT_TARGET)) {
            throw new IllegalStateException("a target named '" + DocumentRef.DEFAULT_TARGET
                    + "' is required (it holds the transactions collection); targets: " + targets.keySet());
        }
        return new TransactionManager(new TransactionManagerSettings(this));
    }
}
