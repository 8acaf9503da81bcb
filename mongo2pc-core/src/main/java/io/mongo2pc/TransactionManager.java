package io.mongo2pc;

import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.mongo2pc.internal.Engine;
import io.mongo2pc.internal.Targets;
import io.mongo2pc.internal.Validation;
import org.bson.Document;
import org.bson.types.ObjectId;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The entry point: runs multi-document transactions on MongoDB with the two-phase-commit protocol
 * of MongoDB's tutorial "Perform Two Phase Commits", built only from single-document atomic writes.
 *
 * <pre>{@code
 * TransactionManager tm = TransactionManager.builder()
 *         .target("default", mongoClient)
 *         .application("payments")
 *         .build();
 * TransactionOutcome outcome = tm.run(List.of(
 *         Operation.increment(DocumentRef.of("bank", "accounts", "A"), "balance", -100L, new Document("balance", new Document("$gte", 100L))),
 *         Operation.increment(DocumentRef.of("bank", "accounts", "B"), "balance", 100L, null)));
 * }</pre>
 *
 * <p>Guarantees: once recovery has run, every transaction is {@code done} with each operation
 * applied exactly once, or {@code canceled} with none in effect. Any process may take over a
 * transaction whose owner's lease expired (judged by the database server's clock); every state
 * change is a compare-and-set under the owner's epoch. Thread-safe: share one instance, and
 * {@link #close()} it when done if it finishes transactions in the background.
 */
public final class TransactionManager implements AutoCloseable {

    private final Engine engine;
    private final Settings settings;

    private TransactionManager(Settings settings) {
        this.settings = settings;
        this.engine = new Engine(new Engine.Config(
                new Targets(settings.targets, settings.writeConcern, settings.readConcern, settings.combinedRequestsInFlight),
                settings.database, settings.transactionsCollection, settings.application, settings.owner,
                settings.lease, settings.maxClockSkew, settings.retryTimeout, settings.conflictTimeout,
                settings.maxOperations, settings.maxMarkers, settings.crashHook, settings.metrics,
                settings.codecs, settings.ids, settings.finishInBackground, settings.twoRoundCommit));
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Runs a transaction to its end in this thread: {@code done} or {@code canceled} with a reason;
     * with {@link Builder#finishInBackground(boolean)}, {@code applied} instead of {@code done}.
     * Its id is made by {@link Builder#ids}; to know it even if this call throws, give one
     * ({@link #run(Object, List)}).
     */
    public TransactionOutcome run(List<Operation> operations) {
        return engine.run(null, operations, null, true);
    }

    /**
     * {@link #run(List)} under the caller's id (a string, an integer or an ObjectId), which makes
     * it idempotent: running the same id again is the same transaction, never a second one. The
     * second call returns the first one's outcome, waiting for it (up to the lease plus the retry
     * timeout) and finishing it if its owner is gone. The same id with other operations is refused
     * with {@link InvalidTransactionException}. Every exception this throws carries the id.
     */
    public TransactionOutcome run(Object transactionId, List<Operation> operations) {
        return engine.run(Objects.requireNonNull(transactionId, "transactionId"), operations, null, true);
    }

    /**
     * Runs a transaction whose document also carries {@code fields} (e.g. a transfer's source,
     * destination and value). With {@code storeOperations} false, the operations are not stored
     * and a registered {@link TransactionCodec} must read them back from {@code fields}.
     */
    public TransactionOutcome run(List<Operation> operations, Document fields, boolean storeOperations) {
        return engine.run(null, operations, fields, storeOperations);
    }

    /** {@link #run(List, Document, boolean)} under the caller's id, as {@link #run(Object, List)}; null makes one. */
    public TransactionOutcome run(Object transactionId, List<Operation> operations, Document fields, boolean storeOperations) {
        return engine.run(transactionId, operations, fields, storeOperations);
    }

    /** Queues a transaction as {@code initial} for any worker ({@link #claimAndRun()}); returns its id. */
    public Object submit(List<Operation> operations) {
        return engine.submit(null, operations, null, true);
    }

    /** {@link #submit(List)} with extra fields, as {@link #run(List, Document, boolean)}. */
    public Object submit(List<Operation> operations, Document fields, boolean storeOperations) {
        return engine.submit(null, operations, fields, storeOperations);
    }

    /**
     * {@link #submit(List, Document, boolean)} under the caller's id ({@code transactionId}; null
     * makes one). Submitting the same id again with the same operations queues nothing more; with
     * other operations it is refused.
     */
    public Object submit(Object transactionId, List<Operation> operations, Document fields, boolean storeOperations) {
        return engine.submit(transactionId, operations, fields, storeOperations);
    }

    /**
     * How the transaction {@code transactionId} ended: {@code done}, {@code canceled} (with its
     * reason and code), or {@code applied} (committed; a live owner is finishing it). Waits while
     * it is open, up to {@code timeout}; a transaction whose owner's lease has run out (the owner
     * crashed, or was paused) is taken over and finished by this call. Empty if no transaction has
     * this id (it was never written, so running it again is safe; or it was pruned). Throws
     * {@link OutcomeUnknownException} if it is still open after {@code timeout}.
     */
    public Optional<TransactionOutcome> awaitOutcome(Object transactionId, Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout);
        }
        return engine.awaitOutcome(Objects.requireNonNull(transactionId, "transactionId"), timeout);
    }

    /** Claims one queued transaction (one findAndModify: exactly one claimer wins) and runs it. */
    public Optional<TransactionOutcome> claimAndRun() {
        return engine.claimAndRun();
    }

    /**
     * Waits until every transaction committed by this manager is {@code done} (or, after an error,
     * left to recovery); false if {@code timeout} passed first. Returns at once unless
     * {@link Builder#finishInBackground(boolean)} is on.
     */
    public boolean awaitFinished(Duration timeout) {
        return engine.awaitFinished(Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * With {@link Builder#finishInBackground(boolean)}: refuses new transactions ({@code run} and
     * {@code claimAndRun} then throw {@link IllegalStateException} before writing anything),
     * finishes the transactions this manager committed in the background (waiting up to the retry
     * timeout; what is left then, recovery finishes once the lease expires) and stops its thread.
     * A manager without it holds nothing to close, and this does nothing. Never closes the
     * MongoClients, which belong to the caller.
     */
    @Override
    public void close() {
        if (!engine.close(settings.retryTimeout)) {
            org.slf4j.LoggerFactory.getLogger(TransactionManager.class).warn(
                    "closed with committed transactions not yet done; recovery will finish them once their lease expires");
        }
    }

    /**
     * One recovery pass over open transactions unchanged for at least {@code olderThan} (at most
     * 500). A transaction that fails (a target down, an outcome unknown) is logged,
     * counted as skipped and left to the next pass; three failing in a row end the pass with the
     * last failure.
     */
    public RecoveryReport recover(Duration olderThan) {
        return engine.recover(Objects.requireNonNull(olderThan, "olderThan"));
    }

    /** One recovery pass over transactions whose owner's lease has expired. */
    public RecoveryReport recover() {
        return recover(settings.lease);
    }

    /**
     * Cancels a transaction before its commit point: a queued one at once, a pending one only once
     * its owner's lease has expired, and says what it found: canceled now, canceled before, past
     * its commit point (or every operation applied, so rolled forward now), a live owner (until
     * when), or no such transaction. The cancel's reason code is
     * {@link ReasonCode#CANCELED_BY_OPERATOR}.
     */
    public CancelResult cancel(Object transactionId, String reason) {
        return engine.cancel(transactionId, reason == null ? "canceled by request" : reason);
    }

    /**
     * A document as of the last committed transaction: never data of a transaction that is not
     * committed or was canceled. Empty if it does not exist in that view. {@code pendingTransactions}
     * reads as empty. Numbers come in one type per scale ({@link Numbers#normalized}): whole
     * numbers as {@code Long}, Decimal128 as {@code BigDecimal}. Throws {@link TransactionException} if the document names a transaction that
     * is not in this manager's transactions collection (one run by a manager with another
     * {@code database} or {@code transactionsCollection}): its state cannot be known here.
     */
    public Optional<Document> readCommitted(DocumentRef document) {
        return engine.readCommitted(document);
    }

    /**
     * Several documents as of one moment: each as of the last committed transaction, and together
     * one consistent cut (a transaction's writes are seen on all of its documents or on none).
     * Writers need not stop: changes made by transactions the documents name are judged, not
     * waited out. Gives up after the {@link Builder#conflictTimeout(Duration) conflict timeout}
     * (see {@link #readCommitted(List, Duration)}).
     */
    public List<Optional<Document>> readCommitted(List<DocumentRef> documents) {
        return readCommitted(documents, settings.conflictTimeout);
    }

    /**
     * {@link #readCommitted(List)}, trying for at most {@code timeout} (zero: one attempt). Throws
     * {@link TransactionException} if no consistent cut was found by then: the documents kept
     * changing in ways no transaction they name explains (e.g. writes outside any transaction), or
     * a transaction added and took back the same amount between the reads of one attempt. Limit: a
     * document changed and changed back between the two reads of an attempt goes unnoticed.
     */
    public List<Optional<Document>> readCommitted(List<DocumentRef> documents, Duration timeout) {
        Objects.requireNonNull(documents, "documents");
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout);
        }
        documents.forEach(ref -> Objects.requireNonNull(ref, "a document of the list is null"));
        return engine.readCommitted(documents, timeout);
    }

    /** A document as stored: plain read, work in flight included. */
    public Optional<Document> read(DocumentRef document) {
        return engine.read(document);
    }

    /** The stored transaction: its state, owner, epoch, lease, operations and reason, and the document as is. */
    public Optional<TransactionView> inspect(Object transactionId) {
        return engine.inspect(transactionId);
    }

    /** Deletes {@code done} and {@code canceled} transactions unchanged for {@code olderThan}. */
    public long prune(Duration olderThan) {
        return engine.prune(olderThan);
    }

    /** The number of transactions in each state. */
    public Map<TransactionState, Long> counts() {
        return engine.counts();
    }

    /** How long the least recently changed open transaction has waited (the recovery lag). */
    public Duration oldestOpen() {
        return engine.oldestOpen();
    }

    /** The database server's time now. */
    public Instant serverTime() {
        return engine.serverTime();
    }

    /** The coordinator collection (with the configured concerns). */
    public MongoCollection<Document> transactions() {
        return engine.transactions();
    }

    public Settings settings() {
        return settings;
    }

    /** The immutable settings a manager was built with. */
    public static final class Settings {
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
        private final TransactionMetrics metrics;
        private final List<TransactionCodec> codecs;
        private final Supplier<Object> ids;
        private final boolean finishInBackground;
        private final boolean twoRoundCommit;
        private final int combinedRequestsInFlight;

        private Settings(Builder b) {
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
            this.metrics = b.metrics;
            this.codecs = List.copyOf(b.codecs);
            this.ids = b.ids;
            this.finishInBackground = b.finishInBackground;
            this.twoRoundCommit = b.twoRoundCommit;
            this.combinedRequestsInFlight = b.combinedRequestsInFlight;
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
        /** True if new transactions follow the two-round commit ({@code protocol: 2}). */
        public boolean twoRoundCommit() { return twoRoundCommit; }
        /** The most combined write requests out at once per collection (group commit). */
        public int combinedRequestsInFlight() { return combinedRequestsInFlight; }
        public WriteConcern writeConcern() { return writeConcern; }
        public ReadConcern readConcern() { return readConcern; }
        public MongoClient target(String name) { return targets.get(name); }
    }

    /** Builds a {@link TransactionManager}; each setter checks its value and names it when refusing. */
    public static final class Builder {
        /** See {@link #combinedRequestsInFlight(int)}. */
        public static final int DEFAULT_COMBINED_REQUESTS_IN_FLIGHT = 16;

        private final Map<String, MongoClient> targets = new LinkedHashMap<>();
        private String database = "mongo2pc";
        private String transactionsCollection = "transactions";
        private String application = "mongo2pc";
        private Duration lease = Duration.ofSeconds(30);
        /** Null: the default, {@link Settings#DEFAULT_MAX_CLOCK_SKEW} or half the lease, whichever is less. */
        private Duration maxClockSkew;
        private Duration retryTimeout = Duration.ofSeconds(30);
        private Duration conflictTimeout = Duration.ofSeconds(5);
        private int maxOperations = 100;
        private int maxMarkers = 1000;
        private WriteConcern writeConcern = WriteConcern.MAJORITY;
        private ReadConcern readConcern = ReadConcern.MAJORITY;
        private CrashHook crashHook = CrashHook.NONE;
        private TransactionMetrics metrics = TransactionMetrics.NONE;
        private final List<TransactionCodec> codecs = new ArrayList<>();
        private Supplier<Object> ids = ObjectId::new;
        private boolean finishInBackground;
        private boolean twoRoundCommit;
        private int combinedRequestsInFlight = DEFAULT_COMBINED_REQUESTS_IN_FLIGHT;

        private Builder() { }

        /** A named MongoClient operations may reach; {@code "default"} also holds the transactions collection. */
        public Builder target(String name, MongoClient client) {
            if (name == null || name.isBlank() || name.contains("/")) {
                throw new IllegalArgumentException("target name must be non-blank without '/', got '" + name + "'");
            }
            targets.put(name, Objects.requireNonNull(client, "client of target " + name));
            return this;
        }

        /** Database of the transactions collection. Default {@code mongo2pc}. */
        public Builder database(String database) {
            String problem = Validation.databaseNameProblem(database);
            if (problem != null) {
                throw new IllegalArgumentException("invalid database name '" + database + "': " + problem);
            }
            this.database = database;
            return this;
        }

        /** Name of the transactions collection. Default {@code transactions}. */
        public Builder transactionsCollection(String name) {
            String problem = Validation.collectionNameProblem(name);
            if (problem != null) {
                throw new IllegalArgumentException("invalid collection name '" + name + "': " + problem);
            }
            this.transactionsCollection = name;
            return this;
        }

        /** This application's name, stored in the tutorial's {@code application} field. Default {@code mongo2pc}. */
        public Builder application(String application) {
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
        public Builder lease(Duration lease) {
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
        public Builder maxClockSkew(Duration maxClockSkew) {
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
        public Builder conflictTimeout(Duration conflictTimeout) {
            if (conflictTimeout == null || conflictTimeout.isNegative()) {
                throw new IllegalArgumentException("conflictTimeout must be zero or positive, got " + conflictTimeout);
            }
            this.conflictTimeout = conflictTimeout;
            return this;
        }

        /** The most markers (open transactions) one document may carry; more wait. Default 1000. */
        public Builder maxMarkers(int maxMarkers) {
            if (maxMarkers < 1 || maxMarkers > 100_000) {
                throw new IllegalArgumentException("maxMarkers must be between 1 and 100000, got " + maxMarkers);
            }
            this.maxMarkers = maxMarkers;
            return this;
        }

        /** How long one step is retried through database errors before the outcome is left to recovery. Default 30s. */
        public Builder retryTimeout(Duration retryTimeout) {
            if (retryTimeout == null || retryTimeout.isNegative()) {
                throw new IllegalArgumentException("retryTimeout must be zero or positive, got " + retryTimeout);
            }
            this.retryTimeout = retryTimeout;
            return this;
        }

        /** The most operations one transaction may have. Default 100. */
        public Builder maxOperations(int maxOperations) {
            if (maxOperations < 1 || maxOperations > 10_000) {
                throw new IllegalArgumentException("maxOperations must be between 1 and 10000, got " + maxOperations);
            }
            this.maxOperations = maxOperations;
            return this;
        }

        /** Write concern of every write. Default majority. */
        public Builder writeConcern(WriteConcern writeConcern) {
            Objects.requireNonNull(writeConcern, "writeConcern");
            if (!writeConcern.isAcknowledged()) {
                throw new IllegalArgumentException("an unacknowledged write concern cannot carry a transaction: " + writeConcern);
            }
            this.writeConcern = writeConcern;
            return this;
        }

        /** Read concern of every read. Default majority. */
        public Builder readConcern(ReadConcern readConcern) {
            this.readConcern = Objects.requireNonNull(readConcern, "readConcern");
            return this;
        }

        /** Hook called at every crash point; tests stop the protocol with it. Default: none. */
        public Builder crashHook(CrashHook crashHook) {
            this.crashHook = Objects.requireNonNull(crashHook, "crashHook");
            return this;
        }

        /** Receives metrics. Default: none. */
        public Builder metrics(TransactionMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** Adds a reader for transaction documents without mongo2pc's {@code ops} (e.g. tutorial transfers). */
        public Builder codec(TransactionCodec codec) {
            codecs.add(Objects.requireNonNull(codec, "codec"));
            return this;
        }

        /** Makes ids of new transactions. Default: a new ObjectId. */
        public Builder ids(Supplier<Object> ids) {
            this.ids = Objects.requireNonNull(ids, "ids");
            return this;
        }

        /**
         * With true, {@code run} and {@code claimAndRun} return a committed transaction at its
         * commit point ({@code applied}: every operation in effect, only ever rolled forward) and one
         * thread of this manager releases its markers and moves it to {@code done}, many
         * transactions per request. Two of a transfer's six sequential requests leave the caller's
         * path. At most 1,024 committed transactions (and at most half of {@code maxMarkers}) wait
         * for that thread; callers wait beyond. If the process dies first, recovery finishes them
         * once the lease expires. Default false: {@code run} returns {@code done}.
         */
        public Builder finishInBackground(boolean finishInBackground) {
            this.finishInBackground = finishInBackground;
            return this;
        }

        /**
         * With true, new transactions follow the two-round commit (docs/PROTOCOL.md): the
         * transaction document and every prepare are sent at once, then the commit; increases take
         * effect only after the commit point, so no guard and no committed read ever relies on an
         * increase that is not committed. Runs transactions of increments only ({@code run}; inserts,
         * updates, deletes and {@code submit} are refused before anything is written). Every
         * manager that recovers or reads the same transactions must run a version that knows these
         * rules (any manager of this version does, whatever this setting). Default false.
         */
        public Builder twoRoundCommit(boolean twoRoundCommit) {
            this.twoRoundCommit = twoRoundCommit;
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
        public Builder combinedRequestsInFlight(int requests) {
            if (requests < 1 || requests > 1_000) {
                throw new IllegalArgumentException("combinedRequestsInFlight must be between 1 and 1000, got " + requests);
            }
            this.combinedRequestsInFlight = requests;
            return this;
        }

        public TransactionManager build() {
            if (!targets.containsKey(DocumentRef.DEFAULT_TARGET)) {
                throw new IllegalStateException("a target named '" + DocumentRef.DEFAULT_TARGET
                        + "' is required (it holds the transactions collection); targets: " + targets.keySet());
            }
            return new TransactionManager(new Settings(this));
        }
    }
}
