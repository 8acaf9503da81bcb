package io.mongo2pc.internal.reads;

import com.mongodb.client.model.Projections;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.Targets;
import io.mongo2pc.spi.Clock;
import org.bson.Document;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * Several documents as one consistent cut, each as of the last committed transaction: a
 * transaction's effects are seen on all of the documents it touches or on none, and never one
 * that is not committed. Thread-safe.
 *
 * <p>One attempt reads every document twice (one request per collection each time), then the
 * transactions the two reads name (one request), and judges each transaction once, by that state:
 * committed ones are in, the others are subtracted where their marker is. Why that is one cut:
 * <ul>
 *   <li>A committed transaction was applied everywhere before its state was read, so every second
 *       read holds its effect, provided the document still carries its marker or carried it in the
 *       first read (then the marker left with the release), and for an update its change too (an
 *       update takes its document, then changes it in a second write). A committed transaction the
 *       reads name but do not show in effect on one of its documents either was released there
 *       before the first read or was applied there only after the second: that document is read
 *       a third time, after the state, and if it reads as in its second read the effect was in
 *       (otherwise the attempt retries). A transaction whose operations cannot be read counts as
 *       touching every document.</li>
 *   <li>A transaction not committed when its state was read, after both reads, was released
 *       nowhere, so its effect is in a second read exactly where its marker is. One not found
 *       committed (no document, another nonce, a state that does not count as committed) may
 *       instead have committed, released and been pruned after the reads: the documents that carry
 *       its marker are read a third time, after the states, and must carry it still.</li>
 *   <li>A transaction the reads never name was committed and released before the second read of
 *       each document it left. If it had not reached another of them by that one's second read,
 *       it was applied and released between the two reads of the first: that document's version
 *       ({@link Versions}: 1 more for each release) moved by more than the releases of the
 *       transactions the reads name, even when its values came back as they were, and the attempt
 *       retries.</li>
 * </ul>
 * So a document may change between its two reads, as long as each change is explained by a
 * transaction the reads name (an apply adds its increment, an undo takes it away, a release changes
 * nothing but the version, by 1); a document taken by an insert, update or delete must not change
 * at all. Writers are never waited for, only an attempt in which some change cannot be explained is
 * repeated.
 * Public for the interactive package and Engine, as are the members they use.
 */
public final class ConsistentCut {
    private final Targets targets;
    private final TransactionStore store;
    private final CommittedReader reader;
    private final Function<Document, List<Operation>> operationsOf;
    /** The local clock of the read's timeout and of the pauses between its attempts. */
    private final Clock clock;

    public ConsistentCut(Targets targets, TransactionStore store, CommittedReader reader,
                  Function<Document, List<Operation>> operationsOf, Clock clock) {
        this.targets = targets;
        this.store = store;
        this.reader = reader;
        this.operationsOf = operationsOf;
        this.clock = clock;
    }

    /** The documents of {@code refs} as one cut; throws {@link TransactionException} if none is found within {@code timeout}. */
    public List<Optional<Document>> read(List<DocumentRef> refs, Duration timeout) {
        long deadline = clock.nanoTime() + timeout.toNanos();
        Map<Integer, Document> namedUnknown = new HashMap<>();
        Retry retry = new Retry();
        for (int attempt = 1; ; attempt++) {
            List<Optional<Document>> views = attempt(refs, namedUnknown, retry);
            if (views != null) {
                return views;
            }
            long left = deadline - clock.nanoTime();
            if (left <= 0) {
                throw new TransactionException("could not read " + refs.size() + " documents as one consistent cut within "
                        + timeout.toMillis() + "ms (" + attempt + " attempts), last because " + retry.why
                        + "; try again, or give the read a longer timeout", retry.transactionId, null);
            }
            pause(attempt, left);
        }
    }

    /** Why the last attempt was repeated, for the message at the deadline. */
    private static final class Retry {
        String why;
        Object transactionId;

        void because(String why, Object transactionId) {
            this.why = why;
            this.transactionId = transactionId;
        }
    }

    /** One attempt: the views, or null (with {@code retry} saying why) if it must be repeated. */
    private List<Optional<Document>> attempt(List<DocumentRef> refs, Map<Integer, Document> namedUnknown, Retry retry) {
        List<Document> first = readAll(refs);
        List<Document> second = readAll(refs);
        Map<Object, Document> transactions = transactionsNamed(first, second);
        Function<Object, Document> transaction = id -> transactions.get(key(id));
        for (int i = 0; i < refs.size(); i++) {
            for (Object id : named(second.get(i))) {
                if (transaction.apply(id) == null && CommittedReader.entryOf(second.get(i), id) == null
                        && !Exclusive.isOf(Exclusive.lockOf(second.get(i)), id, Exclusive.nonceOf(second.get(i)))) {
                    // Finished and pruned since the read, or run by another coordinator: seen twice on
                    // a document that did not change meanwhile, it is the latter.
                    if (second.get(i).equals(namedUnknown.put(i, second.get(i)))) {
                        reader.known(refs.get(i), id, transaction);
                    }
                    retry.because(refs.get(i) + " names transaction " + id + ", which was not found", id);
                    return null;
                }
            }
        }
        for (int i = 0; i < refs.size(); i++) {
            if (!explained(refs.get(i), first.get(i), second.get(i), transaction)) {
                retry.because(refs.get(i) + " changed between its two reads in a way no transaction it names explains"
                        + " (e.g. a write outside any transaction)", null);
                return null;
            }
        }
        if (!confirmedAfterTheStates(refs, first, second, transactions.values(), transaction, retry)) {
            return null;
        }
        List<Optional<Document>> views = new ArrayList<>(refs.size());
        for (int i = 0; i < refs.size(); i++) {
            views.add(second.get(i) == null ? Optional.empty() : reader.resolve(refs.get(i), second.get(i), transaction));
        }
        return views;
    }

    /**
     * True if the change of a document between its two reads is explained by the transactions the
     * reads name: markers added are applies (their increments added), markers gone are releases of
     * committed transactions (no change) or undos of canceled ones (increments taken back), and
     * nothing else differs. A document taken by an exclusive operation, or missing, must not change.
     */
    private boolean explained(DocumentRef ref, Document before, Document after, Function<Object, Document> transaction) {
        if (before == null || after == null || before.containsKey(Fields.LOCK) || after.containsKey(Fields.LOCK)) {
            return Objects.equals(before, after);
        }
        Set<Object> was = keys(named(before));
        Set<Object> is = keys(named(after));
        Document expected = Increments.copy(before);
        long releases = 0; // each release adds 1 to the version; nothing else between two reads may
        for (Object id : named(after)) {
            Document entry = CommittedReader.entryOf(after, id);
            if (!was.contains(key(id)) && entry != null) {
                add(expected, entry.get(EntryName.NOW, Document.class), +1); // a two-round prepare: its hold
            } else if (!was.contains(key(id)) && !changeBy(expected, ref, transaction.apply(id), +1)) {
                return false;
            }
        }
        for (Object id : named(before)) {
            if (is.contains(key(id))) {
                continue;
            }
            Document tx = transaction.apply(id);
            Document entry = CommittedReader.entryOf(before, id);
            TransactionState state = tx == null ? null : LateCommit.counted(tx).orElse(null);
            if (entry != null) {
                // A two-round entry gone: released (its increases added) if committed, undone (its hold given
                // back) if canceled; with no document (or another nonce, or pending) it may have committed,
                // released and been pruned in between: it cannot be judged.
                boolean committed = CommittedReader.committedWith(tx, entry);
                boolean canceled = !committed && tx != null && Objects.equals(tx.get(TwoRoundFields.NONCE), entry.get(EntryName.NONCE))
                        && (state == TransactionState.CANCELING || state == TransactionState.CANCELED);
                if (!committed && !canceled) {
                    return false;
                }
                add(expected, entry.get(committed ? EntryName.LATER : EntryName.NOW, Document.class), committed ? +1 : -1);
                releases += committed ? 1 : 0;
                continue;
            }
            if (state == TransactionState.CANCELING || state == TransactionState.CANCELED) {
                if (!changeBy(expected, ref, tx, -1)) {
                    return false;
                }
            } else if (!CommittedReader.isCommitted(tx)) {
                return false; // a marker gone without a release or an undo: cannot be judged
            } else {
                releases++;
            }
        }
        // Else commits the reads do not name came and went (changes that cancel out leave the values, not the version).
        return Versions.of(after) == Versions.of(before) + releases && Increments.sameContent(content(expected), content(after));
    }

    /** {@code doc} without its markers, entries and version. */
    private static Document content(Document doc) {
        Document content = new Document(doc);
        content.remove(Fields.MARKERS);
        content.keySet().removeIf(field -> EntryName.isEntry(field) || field.equals(Versions.FIELD));
        return content;
    }

    private static void add(Document doc, Document amounts, int sign) {
        if (amounts != null) {
            Increments.add(doc, amounts, sign);
        }
    }

    /** Adds {@code sign} times the increments of {@code tx} on {@code ref} to {@code doc}; false if it has none there. */
    private boolean changeBy(Document doc, DocumentRef ref, Document tx, int sign) {
        List<Operation> ops = tx == null ? null : operations(tx);
        Document increments = ops == null ? null : Increments.of(ops, ref);
        if (increments == null) {
            return false;
        }
        Increments.add(doc, increments, sign);
        return true;
    }

    /**
     * True if a third read, after the states, of the documents that need it confirms the second
     * read and the states (one request per collection). Every committed transaction must be in
     * effect in the second read of each document it touches (each, if its operations cannot be
     * read): seen by its marker in one read or the other, it is; not seen, it was released there
     * before the first read or applied only after the second, so the document must read as in its
     * second read once the transaction was applied everywhere (its version too: changes that came and
     * went in between are seen). And every transaction not found committed
     * whose marker or lock a second read carries must still have it there: it then had released
     * nothing when its state was read, so it was not finished nor pruned; else it may have
     * committed, released and been pruned after the reads (and a late copy of its insert written
     * another document since).
     */
    private boolean confirmedAfterTheStates(List<DocumentRef> refs, List<Document> first, List<Document> second,
                                            Iterable<Document> transactions, Function<Object, Document> transaction, Retry retry) {
        Map<Integer, Object> unseen = new LinkedHashMap<>();
        for (Document tx : transactions) {
            if (!CommittedReader.isCommitted(tx)) {
                continue;
            }
            Object id = key(tx.get(Fields.ID));
            List<Operation> ops = operations(tx);
            for (int i = 0; i < refs.size(); i++) {
                if (touches(ops, refs.get(i)) && !inEffect(first.get(i), id) && !inEffect(second.get(i), id)) {
                    unseen.putIfAbsent(i, tx.get(Fields.ID));
                }
            }
        }
        Map<Integer, List<Object>> notCommitted = new LinkedHashMap<>();
        for (int i = 0; i < refs.size(); i++) {
            List<Object> ids = second.get(i) == null ? List.of() : CommittedReader.notCommitted(second.get(i), transaction);
            if (!ids.isEmpty()) {
                notCommitted.put(i, ids);
            }
        }
        if (unseen.isEmpty() && notCommitted.isEmpty()) {
            return true;
        }
        Set<Integer> indexes = new TreeSet<>(unseen.keySet());
        indexes.addAll(notCommitted.keySet());
        List<Integer> order = List.copyOf(indexes);
        List<DocumentRef> again = new ArrayList<>(order.size());
        order.forEach(i -> again.add(refs.get(i)));
        List<Document> third = readAll(again);
        for (int n = 0; n < order.size(); n++) {
            int i = order.get(n);
            if (unseen.containsKey(i) && !Objects.equals(third.get(n), second.get(i))) {
                Object id = unseen.get(i);
                retry.because("committed transaction " + id + " is not seen on " + refs.get(i)
                        + ", which changed after its second read (the transaction may have been applied there only then)", id);
                return false;
            }
            List<Object> ids = notCommitted.getOrDefault(i, List.of());
            if (!CommittedReader.stillHeld(second.get(i), third.get(n), ids)) {
                retry.because(refs.get(i) + " names a transaction not found committed, and no longer carries it (it may have"
                        + " committed, finished and been pruned since it was read)", ids.get(0));
                return false;
            }
        }
        return true;
    }

    /** True if one of {@code ops} changes {@code ref}; also if {@code ops} is null (not known). */
    private static boolean touches(List<Operation> ops, DocumentRef ref) {
        return ops == null || ops.stream().anyMatch(op -> Increments.touches(op, ref));
    }

    /**
     * The operations of {@code tx}, or null if this manager cannot read them (no stored operations
     * and no codec that recognises it, or stored ones it does not know).
     */
    private List<Operation> operations(Document tx) {
        try {
            return operationsOf.apply(tx);
        } catch (IllegalStateException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * True if {@code doc} shows the effect of transaction {@code id} on it: its marker or lock is
     * there, and, for an update, the change too (an update takes its document first and changes it
     * in a second write, which stores the before-image as {@code undo}).
     */
    private static boolean inEffect(Document doc, Object id) {
        if (doc == null || !keys(named(doc)).contains(id)) {
            return false;
        }
        Document lock = doc.get(Fields.LOCK, Document.class);
        return lock == null || !id.equals(key(lock.get("tx"))) || !"update".equals(lock.get("kind")) || lock.containsKey("undo");
    }

    /** The stored documents of {@code refs} (null where missing), one request per collection. */
    public List<Document> readAll(List<DocumentRef> refs) {
        Map<List<String>, List<Object>> byCollection = new LinkedHashMap<>();
        for (DocumentRef ref : refs) {
            byCollection.computeIfAbsent(List.of(ref.target(), ref.database(), ref.collection()), k -> new ArrayList<>()).add(ref.id());
        }
        Map<List<Object>, Document> found = new HashMap<>();
        byCollection.forEach((coll, ids) -> {
            Document filter = new Document(Fields.ID, ids.size() == 1 ? ids.get(0) : new Document("$in", ids));
            // A projection keeps the read away from the embedded server's torn-read path.
            for (Document doc : targets.collection(coll.get(0), coll.get(1), coll.get(2)).find(filter)
                    .projection(Projections.exclude("__none"))) {
                found.put(List.of(coll, key(doc.get(Fields.ID))), doc);
            }
        });
        List<Document> docs = new ArrayList<>(refs.size());
        for (DocumentRef ref : refs) {
            docs.add(found.get(List.of(List.of(ref.target(), ref.database(), ref.collection()), key(ref.id()))));
        }
        return docs;
    }

    /** The transactions the documents name, by {@link #key} of their id, in one request. */
    private Map<Object, Document> transactionsNamed(List<Document> first, List<Document> second) {
        Set<Object> ids = new LinkedHashSet<>();
        for (List<Document> docs : List.of(first, second)) {
            docs.forEach(doc -> ids.addAll(named(doc)));
        }
        Map<Object, Document> transactions = new HashMap<>();
        if (!ids.isEmpty()) {
            for (Document tx : store.findAll(List.copyOf(ids))) {
                transactions.put(key(tx.get(Fields.ID)), tx);
            }
        }
        return transactions;
    }

    /** The transactions a stored document names: its lock's and its markers'. */
    public static List<Object> named(Document doc) {
        List<Object> ids = new ArrayList<>();
        if (doc == null) {
            return ids;
        }
        Document lock = doc.get(Fields.LOCK, Document.class);
        if (lock != null && lock.get("tx") != null) {
            ids.add(lock.get("tx"));
        }
        if (doc.get(Fields.MARKERS) instanceof List<?> markers) {
            ids.addAll(markers);
        }
        return ids;
    }

    private static Set<Object> keys(List<Object> ids) {
        Set<Object> keys = new LinkedHashSet<>();
        ids.forEach(id -> keys.add(key(id)));
        return keys;
    }

    /** An id as a map key that matches as MongoDB matches ids: the numbers 1, 1L and 1.0 alike. */
    public static Object key(Object id) {
        if (id instanceof Number n) {
            double d = n.doubleValue();
            return d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 0x1p63 ? (Object) n.longValue() : (Object) d;
        }
        return id;
    }

    /** A short pause between attempts (a few milliseconds at most, never past the deadline), so readers do not move in step. */
    private void pause(int attempt, long leftNanos) {
        long maxMillis = Math.min(8L, 1L << Math.min(attempt, 3));
        long millis = Math.min(ThreadLocalRandom.current().nextLong(maxMillis + 1), leftNanos / 1_000_000);
        if (millis <= 0) {
            return;
        }
        try {
            clock.sleep(Duration.ofMillis(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransactionException("interrupted while reading documents as one consistent cut", null, null, e);
        }
    }
}
