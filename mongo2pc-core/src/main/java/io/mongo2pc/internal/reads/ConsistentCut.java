package io.mongo2pc.internal.reads;

import static io.mongo2pc.internal.format.Ids.key;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.Copies;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.DocumentsById;
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
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * Several documents as one consistent cut, each as of the last committed transaction: a
 * transaction's effects are seen on all of the documents it touches or on none, and never one
 * that is not committed. Thread-safe.
 *
 * <p>One attempt makes four reads, one request per collection each: the documents ({@code r1}),
 * the transactions they name ({@code s1}), the documents again ({@code r2}), then the transactions
 * named in either read that {@code s1} did not show committed ({@code s2}). The cut is the committed
 * state at one moment {@code τ} between the end of {@code s1} and the start of {@code r2}; each
 * document's view is its second read with the transactions it names judged as of {@code τ}:
 * <ul>
 *   <li>Committed in {@code s1}: committed before {@code τ}, in. Every write it made on a document
 *       landed before its commit, so before {@code r2}: its marker is there (its pending increase
 *       is added) or it was released (its effect is in the stored values).</li>
 *   <li>Not committed in {@code s2}, read after {@code τ}: not committed at {@code τ}, out (its hold
 *       taken back where its marker is). One not found committed (no document, another nonce) may
 *       instead have committed, released and been pruned after {@code r2}: the documents that
 *       carry its marker are read a third time, after {@code s2}, and must carry it still.</li>
 *   <li>Not committed in {@code s1} but committed in {@code s2}: it committed between the two,
 *       before or after {@code τ}, which cannot be told: the attempt is repeated. (Judged by one
 *       read of the states after both reads of the documents, a transaction could be seen out and
 *       another that committed after it in, the states being read one after another; and one that
 *       was written only after {@code r2} and committed before another named there could not be seen
 *       at all: a cut that was no moment of the history, with values no document ever held.)</li>
 *   <li>Named in no read, or named on one document and not on another it touches: its writes there
 *       came after {@code r2} (then it was not committed at {@code τ}: out, as the view is) or its
 *       marker was released before {@code r1} (its effect in both reads) or between the reads:
 *       that document's version ({@link Versions}: 1 more for each release) moved by more than the
 *       releases of the transactions the reads name, even when its values came back as they
 *       were, and the attempt is repeated.</li>
 * </ul>
 * So a document may change between its two reads, as long as each change is explained by a
 * transaction the reads name (an apply adds its increment, an undo takes it away, a release changes
 * nothing but the version, by 1); a document taken by an insert, update or delete must not change
 * at all. Writers are never waited for; an attempt in which some change cannot be explained, or a
 * transaction committed between the two reads of the states, is repeated.
 * Public for the interactive package and Engine, as are the members they use.
 */
public final class ConsistentCut {
    private final DocumentsById documents;
    private final TransactionStore store;
    private final CommittedReader reader;
    private final Function<Document, List<Operation>> operationsOf;
    /** The local clock of the read's timeout and of the pauses between its attempts. */
    private final Clock clock;

    public ConsistentCut(DocumentsById documents, TransactionStore store, CommittedReader reader,
                  Function<Document, List<Operation>> operationsOf, Clock clock) {
        this.documents = documents;
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

    /**
     * One attempt: the views, or null (with {@code retry} saying why) if it must be repeated. Read in
     * this order: the documents, the transactions they name, the documents again, then the
     * transactions named there that were not committed before (see the class comment).
     */
    private List<Optional<Document>> attempt(List<DocumentRef> refs, Map<Integer, Document> namedUnknown, Retry retry) {
        List<Document> first = readAll(refs);
        Map<Object, Document> transactions = transactionsNamed(List.of(first), Set.of());
        List<Document> second = readAll(refs);
        Set<Object> committedBefore = new LinkedHashSet<>();
        transactions.forEach((id, tx) -> {
            if (CommittedReader.isCommitted(tx)) {
                committedBefore.add(id);
            }
        });
        Map<Object, Document> after = transactionsNamed(List.of(first, second), committedBefore);
        for (Map.Entry<Object, Document> later : after.entrySet()) {
            if (CommittedReader.isCommitted(later.getValue())) {
                // Committed between the two reads of the states: before or after the moment of the cut,
                // which lies between them, cannot be told.
                retry.because("transaction " + later.getValue().get(Fields.ID) + " committed while the documents were read",
                        later.getValue().get(Fields.ID));
                return null;
            }
        }
        transactions.keySet().removeIf(id -> !committedBefore.contains(id)); // judged by their later state only
        transactions.putAll(after);
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
        if (!confirmedAfterTheStates(refs, second, transaction, retry)) {
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
        Document expected = Copies.copy(before);
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
     * True if a third read, after the states, of the documents that need it confirms them (one
     * request per collection): every transaction not found committed whose marker or lock a second
     * read carries must still have it there. It then had released nothing when its state was read,
     * so it was not finished nor pruned; else it may have committed, released and been pruned after
     * the reads (and a late copy of its insert written another document since).
     */
    private boolean confirmedAfterTheStates(List<DocumentRef> refs, List<Document> second,
                                            Function<Object, Document> transaction, Retry retry) {
        Map<Integer, List<Object>> notCommitted = new LinkedHashMap<>();
        for (int i = 0; i < refs.size(); i++) {
            List<Object> ids = second.get(i) == null ? List.of() : CommittedReader.notCommitted(second.get(i), transaction);
            if (!ids.isEmpty()) {
                notCommitted.put(i, ids);
            }
        }
        if (notCommitted.isEmpty()) {
            return true;
        }
        List<Integer> order = List.copyOf(notCommitted.keySet());
        List<DocumentRef> again = new ArrayList<>(order.size());
        order.forEach(i -> again.add(refs.get(i)));
        List<Document> third = readAll(again);
        for (int n = 0; n < order.size(); n++) {
            int i = order.get(n);
            List<Object> ids = notCommitted.get(i);
            if (!CommittedReader.stillHeld(second.get(i), third.get(n), ids)) {
                retry.because(refs.get(i) + " names a transaction not found committed, and no longer carries it (it may have"
                        + " committed, finished and been pruned since it was read)", ids.get(0));
                return false;
            }
        }
        return true;
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
     * The stored documents of {@code refs} (null where missing), one request per collection (shared
     * with other threads' reads of it at the same moment: {@link DocumentsById}).
     */
    public List<Document> readAll(List<DocumentRef> refs) {
        Map<List<String>, List<Object>> byCollection = new LinkedHashMap<>();
        for (DocumentRef ref : refs) {
            byCollection.computeIfAbsent(List.of(ref.target(), ref.database(), ref.collection()), k -> new ArrayList<>()).add(ref.id());
        }
        Map<List<Object>, Document> found = new HashMap<>();
        byCollection.forEach((coll, ids) -> {
            for (Document doc : documents.readWhole(coll.get(0), coll.get(1), coll.get(2), ids)) {
                found.put(List.of(coll, key(doc.get(Fields.ID))), doc);
            }
        });
        List<Document> docs = new ArrayList<>(refs.size());
        for (DocumentRef ref : refs) {
            docs.add(found.get(List.of(List.of(ref.target(), ref.database(), ref.collection()), key(ref.id()))));
        }
        return docs;
    }

    /** The transactions the documents of {@code reads} name, but those of {@code skip}, by {@link #key} of their id, in one request. */
    private Map<Object, Document> transactionsNamed(List<List<Document>> reads, Set<Object> skip) {
        Set<Object> ids = new LinkedHashSet<>();
        for (List<Document> docs : reads) {
            docs.forEach(doc -> named(doc).forEach(id -> {
                if (!skip.contains(key(id))) {
                    ids.add(id);
                }
            }));
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
