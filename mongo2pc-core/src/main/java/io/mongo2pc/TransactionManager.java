package io.mongo2pc;

import io.mongo2pc.internal.Engine;
import io.mongo2pc.internal.interactive.Interactive;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

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
    private final Interactive interactive;
    private final TransactionManagerSettings settings;

    TransactionManager(TransactionManagerSettings settings) {
        this.settings = settings;
        this.engine = new Engine(settings);
        this.interactive = new Interactive(engine.twoRoundAccess(), engine::closed);
    }

    /** A builder of a manager; every setting, its check and its default are on {@link TransactionManagerBuilder}. */
    public static TransactionManagerBuilder builder() {
        return new TransactionManagerBuilder();
    }

    /**
     * Runs a transaction in this thread to its commit point ({@code applied}, finished by this
     * manager's finisher thread; the default) or to its end ({@code done} with
     * {@link TransactionManagerBuilder#finishInBackground(boolean) finishInBackground(false)}), or
     * to {@code canceled} with a reason.
     * Its id is made by {@link TransactionManagerBuilder#ids}; to know it even if this call throws, give one
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

    /**
     * Runs an interactive transaction: {@code body} reads, decides and writes through its
     * {@link TransactionContext}; when it returns, its writes commit together, and only if every
     * document it read is still as it read it (serializable on the documents it touches, among
     * transactions through mongo2pc; docs/INTERACTIVE.md). A conflict runs the body again, with
     * backoff, until the {@link TransactionOptions#DEFAULT_TIMEOUT default timeout}; then
     * {@link TransactionConflictException}. An exception of the body ends the transaction with
     * nothing written and is rethrown as it was thrown (a checked one too, although this method does
     * not declare it) if what the body read still holds; thrown on reads made stale since, it is a
     * conflict. A body that wrote nothing writes no transaction document. The id is one of
     * the manager's {@code ids}.
     */
    public <T> TransactionResult<T> transact(TransactionBody<T> body) {
        return transact(TransactionOptions.defaults(), body);
    }

    /**
     * {@link #transact(TransactionBody)} with {@code options}: the caller's id (the same id run again
     * returns the first run's result without running the body, and never applies twice) and the
     * timeout of the attempts.
     */
    public <T> TransactionResult<T> transact(TransactionOptions options, TransactionBody<T> body) {
        return interactive.transact(Objects.requireNonNull(options, "options"), Objects.requireNonNull(body, "body"));
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
     * crashed, or was paused) is taken over and finished by this call. A pruned transaction answers
     * by its stub ({@link #prune(Duration, PruneOptions)}). Empty if no transaction has this id (it
     * was never written, so running it again is safe; or it was pruned with its id forgotten; or,
     * with the commit insert, its owner has not reached its commit point yet or died before it:
     * running it again is safe too, only one document of the id can ever be written). Throws
     * {@link OutcomeUnknownException} if it is still open after {@code timeout}, or if it ended and
     * was pruned with its id forgotten while this call waited, before it could tell how.
     */
    public Optional<TransactionOutcome> awaitOutcome(Object transactionId, Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be zero or positive, got " + timeout);
        }
        DocumentRef.requirePlainId(Objects.requireNonNull(transactionId, "transactionId"), "transaction id");
        return engine.awaitOutcome(transactionId, timeout);
    }

    /** Claims one queued transaction (one findAndModify: exactly one claimer wins) and runs it. */
    public Optional<TransactionOutcome> claimAndRun() {
        return engine.claimAndRun();
    }

    /**
     * Waits until every transaction committed by this manager is {@code done} (or, after an error,
     * left to recovery); false if {@code timeout} passed first. Returns at once with
     * {@link TransactionManagerBuilder#finishInBackground(boolean) finishInBackground(false)}.
     */
    public boolean awaitFinished(Duration timeout) {
        return engine.awaitFinished(Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * With {@link TransactionManagerBuilder#finishInBackground(boolean) finishInBackground} (the default): refuses new transactions ({@code run} and
     * {@code claimAndRun} then throw {@link IllegalStateException} before writing anything),
     * finishes the transactions this manager committed in the background (waiting up to the retry
     * timeout; what is left then, recovery finishes once the lease expires) and stops its thread.
     * Without it, this only stops the thread that rolls forward what its reads met. Never closes the
     * MongoClients, which belong to the caller.
     */
    @Override
    public void close() {
        if (!engine.close(settings.retryTimeout())) {
            org.slf4j.LoggerFactory.getLogger(TransactionManager.class).warn(
                    "closed with committed transactions not yet done; recovery will finish them once their lease expires");
        }
    }

    /**
     * One recovery pass over open transactions unchanged for at least {@code olderThan} (at most
     * 500), each taken over only once its owner's own lease has
     * run out too (a transaction that stores no lease of its own, written by hand after the
     * tutorial, once unchanged for {@code olderThan}). A transaction that fails (a target down, an
     * outcome unknown) is logged, counted as skipped and left to the next pass; three failing in a
     * row end the pass with the last failure.
     */
    public RecoveryReport recover(Duration olderThan) {
        Objects.requireNonNull(olderThan, "olderThan");
        return engine.recover(olderThan, olderThan);
    }

    /**
     * One recovery pass over open transactions whose owner's lease has run out, by the server's
     * clock (the lease stored in each; the owner stopped writing {@code maxClockSkew} before it), as
     * soon as it has; a transaction that stores no lease of its own (written by hand after the
     * tutorial) waits for this manager's lease.
     */
    public RecoveryReport recover() {
        return engine.recover(Duration.ZERO, settings.lease());
    }

    /**
     * Cancels a transaction before its commit point: a queued one at once, a pending one only once
     * its owner's lease has expired, and says what it found: canceled now, canceled before, past
     * its commit point (or every operation applied, so rolled forward now), a live owner (until
     * when), or no such transaction. The cancel's reason code is
     * {@link ReasonCode#CANCELED_BY_OPERATOR}.
     */
    public CancelResult cancel(Object transactionId, String reason) {
        DocumentRef.requirePlainId(transactionId, "transaction id");
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
     * waited out. Gives up after the {@link TransactionManagerBuilder#conflictTimeout(Duration) conflict timeout}
     * (see {@link #readCommitted(List, Duration)}).
     */
    public List<Optional<Document>> readCommitted(List<DocumentRef> documents) {
        return readCommitted(documents, settings.conflictTimeout());
    }

    /**
     * {@link #readCommitted(List)}, trying for at most {@code timeout} (zero: one attempt). Throws
     * {@link TransactionException} if no consistent cut was found by then: the documents kept
     * changing in ways no transaction they name explains (e.g. writes outside any transaction), or
     * a transaction added and took back the same amount between the reads of one attempt. Changes
     * that cancel out on a document between two reads are seen by its version, which counts commits.
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

    /**
     * The documents of {@code ids} that exist in {@code collection} of {@code database} reached
     * through {@code target}, as stored (a plain read, like {@link #read}), each with its
     * {@code _id} and {@code fields} only; ids are compared as MongoDB compares them ({@code 1} and
     * {@code 1L} are one document). Reads that concurrent callers make in one collection share
     * requests, as the manager's writes do; retried through transient errors. E.g. a transfer
     * checking its accounts before writing anything.
     */
    public List<Document> readByIds(String target, String database, String collection, List<Object> ids, List<String> fields) {
        Objects.requireNonNull(ids, "ids");
        Objects.requireNonNull(fields, "fields");
        return engine.readByIds(target, database, collection, ids, fields);
    }

    /** The stored transaction: its state, owner, epoch, lease, operations and reason, and the document as is. */
    public Optional<TransactionView> inspect(Object transactionId) {
        DocumentRef.requirePlainId(transactionId, "transaction id");
        return engine.inspect(transactionId);
    }

    /**
     * A page of stored transactions that match {@code query}, newest first (most recently changed
     * first), each as {@link #inspect} reads it; {@link TransactionPage#next()} continues after it.
     * Reads only.
     */
    public TransactionPage list(TransactionQuery query) {
        return engine.list(Objects.requireNonNull(query, "query"));
    }

    /** How many stored transactions match {@code query} (its filters; its page size and cursor aside). Reads only. */
    public long count(TransactionQuery query) {
        return engine.count(Objects.requireNonNull(query, "query"));
    }

    /**
     * Records on transaction {@code transactionId} that {@code by} (a person, a token's name) did
     * {@code action} ("cancel", "recover"), with the server's time, in its document's {@code actions}
     * (the last 20 kept): an audit of the hand on it. Changes nothing else, not even its
     * {@code lastModified}. False if there is no such transaction.
     */
    public boolean note(Object transactionId, String action, String by) {
        DocumentRef.requirePlainId(Objects.requireNonNull(transactionId, "transactionId"), "transaction id");
        if (action == null || action.isBlank() || by == null || by.isBlank()) {
            throw new IllegalArgumentException("a note needs an action and who did it, got " + action + " by " + by);
        }
        return engine.note(transactionId, action, by);
    }

    /** The open transaction that has waited longest since its last change (never stamped ones first), if any. */
    public Optional<TransactionView> oldestOpenTransaction() {
        return engine.oldestOpenTransaction();
    }

    /**
     * {@link #prune(Duration, PruneOptions)} with {@link PruneOptions#defaults()}: {@code done}
     * transactions unchanged for {@code olderThan} become stubs (canceled ones are kept); how many.
     */
    public long prune(Duration olderThan) {
        return prune(olderThan, PruneOptions.defaults()).pruned();
    }

    /**
     * Prunes finished transactions unchanged for {@code olderThan} (by the server's clock): each
     * {@code done} one (and {@code canceled} one, with {@link PruneOptions#includeCanceled()}) is
     * replaced by a stub that keeps only its id and outcome, so that its id keeps answering for it: run
     * again, it returns that outcome and runs nothing; {@link #awaitOutcome} and {@link #inspect} read
     * it. Stubs are not counted ({@link #counts()}) nor listed ({@link #list}). With
     * {@link PruneOptions#forgetIds()} the transactions, and the stubs of earlier prunes as old, are
     * deleted instead: their ids may then run again as new transactions. With
     * {@link PruneOptions#dryRun()} nothing is written and the result counts what would be pruned.
     *
     * @throws IllegalArgumentException if {@code olderThan} is negative
     * @throws InvalidTransactionException unless {@link PruneOptions#force()}, if {@code olderThan} is
     *         shorter than {@link PruneResult#minimumAge()}: the longest
     *         lease of the transactions' owners (and this manager's) plus the clock-skew margin, within
     *         which a finished transaction may still meet its owner (its last state change, a late copy
     *         of one of its writes)
     */
    public PruneResult prune(Duration olderThan, PruneOptions options) {
        return engine.prune(olderThan, Objects.requireNonNull(options, "options"));
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

    public TransactionManagerSettings settings() {
        return settings;
    }
}
