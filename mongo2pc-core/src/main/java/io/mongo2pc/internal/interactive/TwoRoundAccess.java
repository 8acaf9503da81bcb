package io.mongo2pc.internal.interactive;

import io.mongo2pc.internal.format.Ids;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.CommittedImage;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Priority;
import io.mongo2pc.internal.reads.CommittedReader;
import io.mongo2pc.internal.reads.ConsistentCut;
import io.mongo2pc.internal.recovery.Outcomes;
import io.mongo2pc.internal.state.OwnedTransaction;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.tworound.CommitInsert;
import io.mongo2pc.internal.tworound.Resolver;
import io.mongo2pc.internal.tworound.TwoRound;
import io.mongo2pc.internal.tworound.TwoRoundContext;
import io.mongo2pc.internal.tworound.TwoRoundFinish;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * What interactive transactions use of the two-round commit: reads of committed images with their
 * versions ({@link CommittedReader}), the participant writes of an attempt
 * ({@link TakesAsRead}, {@link InteractiveWrites}), resolving what other transactions left ({@link Resolver}), the commit
 * insert ({@link CommitInsert}), releases and undos ({@link TwoRoundFinish}), and the outcome of a
 * transaction id. Thread-safe.
 * Public for Engine, as are the members they use.
 */
public final class TwoRoundAccess {
    /** One attempt of a transaction: its id, nonce, deadline (server time) and priority (its first attempt's time, its own nonce). */
    public record Attempt(Object id, String nonce, Instant until, Priority priority, long startNanos) { }

    /** What a participant write of an attempt did. */
    public enum Kind { IN_EFFECT, CHANGED, HELD, EXPIRED, IN_DOUBT, REFUSED }

    /** A write's answer: in effect, or why not, and the transaction that held the document if known. */
    public record Prepared(Kind kind, String reason, Object heldBy) {
        static final Prepared IN_EFFECT = new Prepared(Kind.IN_EFFECT, null, null);
        static final Prepared EXPIRED = new Prepared(Kind.EXPIRED, "the attempt passed its deadline", null);
        static final Prepared IN_DOUBT = new Prepared(Kind.IN_DOUBT, "a write was not answered", null);
    }

    /**
     * A pessimistic take: in effect with the document as stored, or why not: the holder and its
     * priority if it has one; {@code locked} when the attempt's lock is on it (then HELD: increments
     * in flight still to drain).
     */
    public record Taken(Kind kind, Document stored, String reason, Object heldBy, Priority holderPriority, boolean locked) { }

    /**
     * A document as read: its committed image, the stored document it was computed from (null if
     * none), and the lock on it if that is a two-round lock whose transaction committed (its release
     * still to come), else null.
     */
    public record Reading(CommittedImage image, Document stored, Document committedLock) {
        Reading(CommittedImage image, Document stored) {
            this(image, stored, null);
        }

        /**
         * The committed update lock that an optimistic take may replace (docs/INTERACTIVE.md,
         * "Reading"): the lock of a committed two-round update when nothing else of other
         * transactions is on the document, else null. The stored content and version are then the committed ones.
         */
        public Document replaceableLock() {
            return committedLock != null && updateLockAlone(stored) != null ? committedLock : null;
        }

        /** The lock on {@code stored} if it is a two-round update's and nothing else of other transactions is there, else null. */
        static Document updateLockAlone(Document stored) {
            Document lock = stored == null ? null : stored.get(Fields.LOCK, Document.class);
            if (lock == null || !Exclusive.isTwoRound(lock) || !"update".equals(lock.getString("kind"))) {
                return null;
            }
            Document rest = new Document(stored);
            rest.remove(Fields.LOCK);
            return isClean(rest) ? lock : null;
        }

        /** True if the stored document carries nothing of other transactions (no marker, no lock). */
        public boolean clean() {
            return isClean(stored);
        }

        /** True if {@code stored} (null: missing) carries nothing of other transactions (no marker, no lock). */
        public static boolean isClean(Document stored) {
            return stored == null || !stored.containsKey(Fields.LOCK) && !CommittedReader.hasEntries(stored)
                    && stored.getList(Fields.MARKERS, Object.class, List.of()).isEmpty();
        }

        /** The lock on the stored document, or null. */
        public Document lock() {
            return stored == null ? null : stored.get(Fields.LOCK, Document.class);
        }
    }

    /** How an attempt's commit ended. */
    public enum Commit { COMMITTED, LATE, OTHER }

    /** The commit's end: its outcome when committed, the id's other transaction when OTHER. */
    public record Committed(Commit kind, TransactionOutcome outcome, Document other) { }

    private final TwoRoundContext c;
    private final TwoRound twoRound;
    private final CommittedReader reader;
    private final ConsistentCut cut;
    private final Outcomes outcomes;
    private final StoredOperations operations;
    private final InteractiveWrites writes;
    private final TakesAsRead takes;

    public TwoRoundAccess(TwoRound twoRound, CommittedReader reader, ConsistentCut cut, Outcomes outcomes, StoredOperations operations) {
        this.c = twoRound.context();
        this.twoRound = twoRound;
        this.reader = reader;
        this.cut = cut;
        this.outcomes = outcomes;
        this.operations = operations;
        this.writes = new InteractiveWrites(c);
        this.takes = new TakesAsRead(c, cut, writes);
    }

    public TransactionManagerSettings settings() {
        return c.settings();
    }

    public MongoCollection<Document> collection(DocumentRef ref) {
        return c.targets().collection(ref);
    }

    /** The codec registry of the transactions collection's client (the {@code default} target). */
    public org.bson.codecs.configuration.CodecRegistry codecRegistry() {
        return c.store().collection().getCodecRegistry();
    }

    /**
     * Refuses an operation no transaction may make, as {@code run} refuses it: an unknown target, bad
     * names or id, the coordinator's own collections, reserved fields, operators not allowed.
     */
    public void check(Operation op) {
        operations.validate(List.of(op), 1, null);
    }

    /**
     * Refuses a document no transaction may reach: an unknown target, bad names or id, the
     * coordinator's own collections (as {@link #check} does for an operation on it, without building one).
     */
    public void checkReference(DocumentRef ref) {
        if (!c.targets().names().contains(ref.target())) {
            throw new InvalidTransactionException(ref + ": unknown target '" + ref.target() + "', known: " + c.targets().names());
        }
        String problem = DocumentRef.databaseNameProblem(ref.database());
        if (problem == null) {
            problem = DocumentRef.collectionNameProblem(ref.collection());
        }
        if (problem != null) {
            throw new InvalidTransactionException(ref + ": invalid database or collection name: " + problem);
        }
        DocumentRef.requirePlainId(ref.id(), ref);
        String transactions = c.settings().transactionsCollection();
        if (ref.target().equals(DocumentRef.DEFAULT_TARGET) && ref.database().equals(c.settings().database())
                && (ref.collection().equals(transactions) || ref.collection().equals(transactions + "_clock"))) {
            throw new InvalidTransactionException(ref + ": the collection " + ref.collection()
                    + " belongs to the transaction coordinator and cannot be read or changed in a transaction");
        }
    }

    /**
     * A new attempt of transaction {@code id}: a nonce of its own, its deadline a lease from now (less
     * the skew), its priority {@code since} (the first attempt's; null for the first attempt, whose
     * own reading of the server's clock becomes it), as {@link Priority} orders transactions.
     */
    public Attempt begin(Object id, Instant since) {
        Instant now = c.retrier().call("read clock", id, null, c.clock()::lowerBound);
        String nonce = UUID.randomUUID().toString();
        Instant until = now.plus(c.settings().lease()).minus(c.settings().maxClockSkew());
        return new Attempt(id, nonce, until, new Priority(since != null ? since : now, nonce), System.nanoTime());
    }

    /** Records {@code ref}'s collection for the sweep, before anything is prepared there. */
    public void register(Object id, DocumentRef ref) {
        c.retrier().call("record participants", id, null, () -> {
            c.sweep().register(ref);
            return null;
        });
    }

    /** One document as of the last committed transaction, with its committed version (read again while it changes). */
    public Reading read(Object id, DocumentRef ref) {
        return c.retrier().call("read", id, null, () -> reader.read(ref,
                (r, doc, transaction) -> new Reading(reader.image(r, doc, transaction), doc, committedLock(doc, transaction)),
                new Reading(CommittedImage.NONE, null)));
    }

    /**
     * {@code stored}, a document {@link #readStored} found under an update lock and nothing else of
     * other transactions, read as committed if the lock's transaction committed (one read of its
     * state): then the stored content and version are the committed ones, and the lock one an
     * optimistic take may replace. Null if the document carries anything else, or the lock's
     * transaction has not committed.
     */
    public Reading overCommittedLock(Object id, DocumentRef ref, Document stored) {
        Document lock = Reading.updateLockAlone(stored);
        if (lock == null) {
            return null;
        }
        Document transaction = c.retrier().call("read", id, null, () -> c.store().find(lock.get("tx")));
        if (!CommittedReader.committedWith(transaction, lock)) {
            return null;
        }
        return new Reading(reader.image(ref, stored, tx -> transaction), stored, lock);
    }

    /** The lock on {@code doc} if it is a two-round lock whose transaction ({@code transaction} finds it) committed, else null. */
    private static Document committedLock(Document doc, Function<Object, Document> transaction) {
        Document lock = doc == null ? null : doc.get(Fields.LOCK, Document.class);
        return lock != null && Exclusive.isTwoRound(lock) && CommittedReader.committedWith(transaction.apply(lock.get("tx")), lock)
                ? lock : null;
    }

    /**
     * The stored documents of {@code refs} (null where missing), one read per collection; nothing of
     * other transactions on them is judged (see {@link #cleanReading}).
     */
    public List<Document> readStored(Object id, List<DocumentRef> refs) {
        return c.retrier().call("read", id, null, () -> cut.readAll(refs));
    }

    /** The reading of {@code stored}, a document of {@code ref} that carries nothing of other transactions ({@link Reading#isClean}). */
    public Reading cleanReading(DocumentRef ref, Document stored) {
        if (!Reading.isClean(stored)) {
            throw new IllegalArgumentException(ref + " carries other transactions' markers or lock: its committed image needs their states");
        }
        return stored == null ? new Reading(CommittedImage.NONE, null) : new Reading(reader.image(ref, stored, tx -> null), stored);
    }

    /**
     * Several documents as of the last committed transaction: one read per collection; documents
     * that carry other transactions' markers or locks are judged by the states of those (one
     * request) and read again until unchanged across it.
     */
    public List<Reading> readAll(Object id, List<DocumentRef> refs) {
        return c.retrier().call("read", id, null, () -> {
            List<Document> stored = cut.readAll(refs);
            for (int attempt = 0; ; attempt++) {
                Set<Object> named = new LinkedHashSet<>();
                stored.forEach(doc -> named.addAll(ConsistentCut.named(doc)));
                Map<Object, Document> states = new HashMap<>();
                if (!named.isEmpty()) {
                    c.store().findAll(List.copyOf(named)).forEach(tx -> states.put(Ids.key(tx.get(Fields.ID)), tx));
                }
                List<Reading> readings = new ArrayList<>(refs.size());
                for (int i = 0; i < refs.size(); i++) {
                    Document doc = stored.get(i);
                    Function<Object, Document> state = txId -> states.get(Ids.key(txId));
                    readings.add(doc == null ? new Reading(CommittedImage.NONE, null)
                            : new Reading(reader.image(refs.get(i), doc, state), doc, committedLock(doc, state)));
                }
                if (named.isEmpty()) {
                    return readings;
                }
                List<Document> again = cut.readAll(refs);
                if (again.equals(stored) || attempt >= 100) {
                    return readings;
                }
                stored = again;
            }
        });
    }

    /** Rolls forward or undoes what other transactions left on {@code stored} and can be decided now; how many it removed. */
    public int resolve(Attempt a, DocumentRef ref, Document stored) {
        return c.retrier().call("resolve markers", a.id(), null,
                () -> c.resolver().resolve(c.targets().collection(ref), stored, a.id(), a.nonce()));
    }

    public Prepared takeAndChange(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock, Document after) {
        return takes.takeAndChange(a, index, ref, read, overLock, after);
    }

    public Prepared takeForDelete(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock) {
        return takes.takeForDelete(a, index, ref, read, overLock);
    }

    /** The takes of {@code entries}, documents as read of one collection, written or deleted, in one request (see {@link TakesAsRead#takeAll}). */
    Prepared[] takeAll(Attempt a, List<Entry> entries) {
        int[] indexes = new int[entries.size()];
        List<DocumentRef> refs = new ArrayList<>(entries.size());
        List<CommittedImage> reads = new ArrayList<>(entries.size());
        List<Document> overLocks = new ArrayList<>(entries.size());
        List<UpdateOneModel<Document>> sent = new ArrayList<>(entries.size());
        for (int i = 0; i < indexes.length; i++) {
            Entry e = entries.get(i);
            indexes[i] = e.index;
            refs.add(e.ref);
            reads.add(e.read);
            overLocks.add(e.overLock);
            sent.add(e.current == null ? takes.takeForDeleteWrite(a, e.ref, e.read, e.overLock)
                    : takes.takeAndChangeWrite(a, e.ref, e.read, e.overLock, e.current));
        }
        return takes.takeAll(a, indexes, refs, reads, overLocks, sent);
    }

    public Prepared insert(Attempt a, int index, DocumentRef ref, Document content) {
        return writes.insert(a, index, ref, content);
    }

    /** See {@link InteractiveWrites#take}. */
    public Taken take(Attempt a, int index, DocumentRef ref, boolean overMarkers) {
        return writes.take(a, index, ref, overMarkers);
    }

    public Prepared change(Attempt a, int index, DocumentRef ref, Document stored, Document after) {
        return writes.change(a, index, ref, stored, after);
    }

    public Prepared markDelete(Attempt a, int index, DocumentRef ref) {
        return writes.markDelete(a, index, ref);
    }

    public void unlock(Attempt a, DocumentRef ref) {
        writes.unlock(a, ref);
    }

    /** Waits until no write of attempt {@code a} can take effect any more (its deadline plus the skew passed everywhere). */
    public void awaitPassed(Attempt a) {
        c.writesInDoubt().awaitPassedEverywhere(a.until(), a.id());
    }

    /** Undoes every write of {@code ops} that attempt {@code a} put in effect, by its nonce (none can land any more). */
    public void undo(Attempt a, List<Operation> ops) {
        twoRound.finish().undoAll(owned(a, ops), false);
    }

    /**
     * Commits attempt {@code a}, every write of which ({@code ops}) is in effect, by the commit insert
     * of its document with {@code fields}: COMMITTED (its outcome, releases handed to the finisher
     * or done), LATE (inserted after its deadline or abandoned: counts as canceled, its writes
     * undone), OTHER (the id's document is another transaction's: ours undone, that one returned).
     */
    public Committed commit(Attempt a, List<Operation> ops, Document fields) {
        OwnedTransaction tx = owned(a, ops);
        String token = c.tokens().next();
        Document doc = new Document(fields);
        doc.append(Fields.APPLICATION, c.settings().application()).append(Fields.OWNER, c.settings().owner())
                .append(Fields.EPOCH, 1L).append(Fields.LEASE_MS, c.settings().lease().toMillis())
                .append(Fields.OPS, OperationCodec.encode(ops)).append(Fields.TOKEN, token).append(TwoRoundFields.NONCE, a.nonce())
                .append(TwoRoundFields.PROTOCOL, TwoRoundFields.RULES).append(TwoRoundFields.UNTIL, Date.from(a.until()));
        CommitInsert.Found found = twoRound.commitInsert().commit(tx, doc, token);
        switch (found) {
            case COMMITTED -> {
                c.settings().metrics().started();
                return new Committed(Commit.COMMITTED, twoRound.finish().drive(tx, true), null);
            }
            case LATE, UNKNOWN, ABANDONED -> {
                twoRound.commitInsert().late(tx, found); // undoes by the nonce; throws for UNKNOWN
                return new Committed(Commit.LATE, null, null);
            }
            case TAKEN_OVER -> throw new LeaseLostException("transaction " + a.id() + " was taken over before its owner "
                    + c.settings().owner() + " knew its commit was written", a.id(), TransactionState.PENDING);
            default -> {
                twoRound.finish().undoAll(tx, false);
                return new Committed(Commit.OTHER, null, transaction(a.id()).orElse(null));
            }
        }
    }

    private OwnedTransaction owned(Attempt a, List<Operation> ops) {
        OwnedTransaction tx = new OwnedTransaction(a.id(), 1L, ops, TransactionState.PENDING, null);
        tx.nonce = a.nonce();
        tx.deadline = a.until();
        tx.insertedBefore = a.until();
        tx.stampedNanos = a.startNanos();
        return tx;
    }

    /** The stored transaction document of {@code id}, if any. */
    public Optional<Document> transaction(Object id) {
        return Optional.ofNullable(c.retrier().call("read", id, null, () -> c.store().find(id)));
    }

    /** The outcome of {@code id} once decided, waiting up to {@code timeout} (see {@link Outcomes#await}). */
    public Optional<TransactionOutcome> await(Object id, Duration timeout) {
        return outcomes.await(id, timeout);
    }

    /**
     * Deletes a tombstone a resolver wrote for {@code id} under {@code nonce}, a nonce of one of this
     * transaction's own failed attempts: no commit of it was ever sent, so nothing is left for the
     * tombstone to stop. True if it was there.
     */
    public boolean removeOwnTombstone(Object id, String nonce) {
        return c.retrier().call("remove tombstone", id, null, () -> c.store().collection().deleteOne(new Document(Fields.ID, id)
                .append(TwoRoundFields.NONCE, nonce).append(Resolver.TOMBSTONE, true)).getDeletedCount() == 1);
    }

    /** The id of a new transaction, from the manager's {@code ids}. */
    public Object newId() {
        return c.settings().ids().get();
    }

    /** Refuses an id that is not a plain value, or that no two-round entry can be named after. */
    public static void checkId(Object id) {
        DocumentRef.requirePlainId(id, "transaction id");
        if (!EntryName.supports(id)) {
            throw new InvalidTransactionException("transaction id " + id + " cannot be used by an interactive transaction", id);
        }
    }
}
