package io.mongo2pc.internal.reads;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.Numbers;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.CommittedImage;
import io.mongo2pc.internal.format.Copies;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Inserts;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.DocumentsById;
import org.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Reads a document as of the last committed transaction: never data of a transaction that is not
 * committed (before {@code applied}) nor of one that was canceled. A document taken by a
 * transaction is resolved by that transaction's state: committed shows it, otherwise its
 * before-image (update), nothing (insert) or the document (delete); increments of transactions
 * not committed are subtracted again. Numbers come in one type per scale ({@link Numbers#normalized}:
 * whole numbers as Long, Decimal128 as BigDecimal). {@link ConsistentCut} reads several documents
 * as one cut. A committed two-round transaction met on a document (its credit not released yet)
 * is handed to {@link RollForward}, which finishes it off the read's path.
 * Thread-safe.
 * Public for the interactive package and Engine, as are the members they use.
 */
public final class CommittedReader {
    private final DocumentsById documents;
    private final TransactionStore store;
    private final Function<Document, List<Operation>> operationsOf;
    /** Told of each committed two-round transaction whose marker a read met, to be rolled forward off the read's path. */
    private final Consumer<Object> committedMet;

    public CommittedReader(DocumentsById documents, TransactionStore store, Function<Document, List<Operation>> operationsOf,
                    Consumer<Object> committedMet) {
        this.documents = documents;
        this.store = store;
        this.operationsOf = operationsOf;
        this.committedMet = committedMet;
    }

    /**
     * How often a document is read again while it keeps changing. Then a validated read (one whose
     * document versions are checked again before they count) takes the view if the document still
     * carries every transaction not found committed, and gives up after ten times as many; a plain
     * read throws {@link KeepsChanging}, for the caller to read it as a cut of one.
     */
    private static final int MAX_ATTEMPTS = 100;

    /**
     * {@code ref} as of the last committed transaction, at one moment of the read; throws
     * {@link KeepsChanging} if it changed between each two of many reads.
     */
    public Optional<Document> read(DocumentRef ref) {
        return read(ref, this::resolve, Optional.empty(), false);
    }

    /**
     * Like {@link #read(DocumentRef)}, for a reader that checks the committed version it read before
     * the read counts: after many changes, a view whose transactions not found committed are still on
     * the document will do. It may miss a transaction that committed before another it shows (a
     * value of no one moment), which moves the version that the check compares.
     */
    public <T> T read(DocumentRef ref, Resolution<T> resolution, T missing) {
        return read(ref, resolution, missing, true);
    }

    /** A document that changed between each two of many reads: read it as a cut of one ({@link ConsistentCut}). */
    public static final class KeepsChanging extends TransactionException {
        KeepsChanging(DocumentRef ref, int attempts) {
            super("could not read " + ref + " as committed: it changed between each two of " + attempts + " reads; read it again",
                    null, null);
        }
    }

    /** A document with the transactions it names judged; a document that names any is read again until unchanged. */
    private <T> T read(DocumentRef ref, Resolution<T> resolution, T missing, boolean validated) {
        Document doc = raw(ref);
        for (int attempts = 0; ; attempts++) {
            if (doc == null) {
                return missing;
            }
            Map<Object, Document> transactions = new HashMap<>();
            Function<Object, Document> transaction = id -> transactions.computeIfAbsent(id, store::find);
            try {
                T view = resolution.resolve(ref, doc, transaction);
                List<Object> notCommitted = notCommitted(doc, transaction);
                if (!hasEntries(doc) && Exclusive.lockOf(doc) == null && notCommitted.isEmpty()) {
                    return view;
                }
                if (committedMeanwhile(doc, notCommitted, transaction)) {
                    doc = raw(ref);
                    continue;
                }
                // The view holds once the document did not change while the states were read; after many
                // changes, once each transaction not found committed is still on it (docs/TWO-ROUND.md,
                // "Read committed": else it may have committed, released and been pruned meanwhile).
                Document again = raw(ref);
                if (Objects.equals(again, doc) || validated && attempts >= MAX_ATTEMPTS && stillHeld(doc, again, notCommitted)) {
                    return view;
                }
                if (attempts >= (validated ? 10 * MAX_ATTEMPTS : MAX_ATTEMPTS)) {
                    throw new KeepsChanging(ref, attempts);
                }
                doc = again;
            } catch (UnknownTransactionException e) {
                // It may have finished and been pruned since the document was read (its markers are
                // gone first): read the document again; unchanged, it names one this reader cannot see.
                Document again = raw(ref);
                if (Objects.equals(again, doc)) {
                    throw e;
                }
                doc = again;
            }
        }
    }

    /**
     * True if one of {@code notCommitted}, read again, is committed now, while {@code doc} names
     * others found committed. The states are read one after another: one found not committed may
     * have committed before another was found committed, and a view with the later one in and the
     * earlier one out is no moment of the history (a value the document never held). Read again
     * after all the others, each not committed then was not committed at any moment before, so the
     * view is the document's committed state once the last state found committed was read.
     */
    private boolean committedMeanwhile(Document doc, List<Object> notCommitted, Function<Object, Document> transaction) {
        if (notCommitted.isEmpty() || new HashSet<>(ConsistentCut.named(doc)).size() <= new HashSet<>(notCommitted).size()) {
            return false;
        }
        Map<Object, Document> again = new HashMap<>();
        Function<Object, Document> fresh = id -> notCommitted.contains(id) ? again.computeIfAbsent(id, store::find) : transaction.apply(id);
        return notCommitted(doc, fresh).size() < notCommitted.size();
    }

    /** How a stored document becomes what a read returns, the transactions it names judged by {@code transaction}. */
    @FunctionalInterface
    public interface Resolution<T> {
        T resolve(DocumentRef ref, Document doc, Function<Object, Document> transaction);
    }

    /**
     * The transactions {@code doc} names (its lock's and its markers') that {@code transaction} does
     * not show committed: no document, another nonce, or a state that does not count as committed.
     * Such a judgment stands only if a read of the document after the states still carries them
     * ({@link #stillHeld}): a transaction that committed, released its markers and was pruned in
     * between has no document, or a late copy's.
     */
    static List<Object> notCommitted(Document doc, Function<Object, Document> transaction) {
        List<Object> ids = new ArrayList<>();
        Document lock = doc.get(Fields.LOCK, Document.class);
        Object lockTx = lock == null ? null : lock.get("tx");
        if (lockTx != null && !(Exclusive.isTwoRound(lock) ? committedWith(transaction.apply(lockTx), lock)
                : isCommitted(transaction.apply(lockTx)))) {
            ids.add(lockTx);
        }
        if (doc.get(Fields.MARKERS) instanceof List<?> markers) {
            for (Object marker : markers) {
                if (Ids.sameId(marker, lockTx)) {
                    continue;
                }
                Document entry = entryOf(doc, marker);
                if (!(entry != null ? committedWith(transaction.apply(marker), entry) : isCommitted(transaction.apply(marker)))) {
                    ids.add(marker);
                }
            }
        }
        return ids;
    }

    /**
     * True if {@code later}, a read of the document after {@code doc}, still carries each of
     * {@code ids} as {@code doc} did: its lock with the same nonce, or its marker (and its entry with
     * the same nonce).
     */
    static boolean stillHeld(Document doc, Document later, List<Object> ids) {
        if (ids.isEmpty()) {
            return true;
        }
        if (later == null) {
            return false;
        }
        Document lock = doc.get(Fields.LOCK, Document.class);
        Document laterLock = later.get(Fields.LOCK, Document.class);
        List<?> laterMarkers = later.get(Fields.MARKERS) instanceof List<?> l ? l : List.of();
        for (Object id : ids) {
            if (lock != null && Ids.sameId(lock.get("tx"), id)) {
                if (laterLock == null || !Ids.sameId(laterLock.get("tx"), id)
                        || !Objects.equals(lock.get(EntryName.NONCE), laterLock.get(EntryName.NONCE))) {
                    return false;
                }
                continue;
            }
            Document entry = entryOf(doc, id);
            Document laterEntry = entryOf(later, id);
            if (laterMarkers.stream().noneMatch(m -> Ids.sameId(m, id)) || entry != null
                    && (laterEntry == null || !Objects.equals(entry.get(EntryName.NONCE), laterEntry.get(EntryName.NONCE)))) {
                return false;
            }
        }
        return true;
    }

    /** True if {@code doc} carries two-round entries or markers (whose transactions a read must judge). */
    public static boolean hasEntries(Document doc) {
        return doc.keySet().stream().anyMatch(EntryName::isEntry);
    }

    private Document raw(DocumentRef ref) {
        List<Document> found = documents.readWhole(ref.target(), ref.database(), ref.collection(), List.of(ref.id()));
        return found.isEmpty() ? null : found.get(0);
    }

    /**
     * {@code doc} as of the last committed transaction, judging each transaction it names by the
     * document {@code transaction} returns for its id (its state and operations); numbers in the one
     * type of their scale, without the library's fields.
     */
    Optional<Document> resolve(DocumentRef ref, Document doc, Function<Object, Document> transaction) {
        CommittedImage image = image(ref, doc, transaction);
        if (!image.exists()) {
            return Optional.empty();
        }
        // every number in the one type of its scale, at any depth; an id is not an amount: as stored
        Document normalized = (Document) Copies.copy(image.content(), Numbers::normalized);
        if (image.content().containsKey(Fields.ID)) {
            normalized.put(Fields.ID, image.content().get(Fields.ID));
        }
        return Optional.of(normalized);
    }

    /**
     * {@code doc} as of the last committed transaction, numbers as stored, and its committed version:
     * the stored one (an update not committed: its before-image's) plus one for each increment marker
     * whose transaction is committed (its release will add it).
     */
    public CommittedImage image(DocumentRef ref, Document doc, Function<Object, Document> transaction) {
        Document view = new Document(doc);
        long version = Versions.of(doc);
        view.remove(Fields.LOCK);
        Document lock = doc.get(Fields.LOCK, Document.class);
        Object lockTx = lock == null ? null : lock.get("tx");
        if (lock != null) {
            if (Inserts.isLate(doc)) {
                return CommittedImage.NONE;
            }
            boolean committed;
            if (Exclusive.isTwoRound(lock)) {
                // Two-round: committed only with its nonce; no document (yet, or a tombstone) is not committed.
                requireSameCoordinator(ref, lockTx, lock);
                committed = committedWith(transaction.apply(lockTx), lock);
            } else {
                committed = isCommitted(known(ref, lockTx, transaction));
            }
            String kind = lock.getString("kind");
            if ("insert".equals(kind) && !committed || "delete".equals(kind) && committed) {
                return CommittedImage.NONE;
            }
            Document undo = lock.get(Exclusive.UNDO, Document.class); // an update changed, not committed: as it was
            if ("update".equals(kind) && !committed && undo != null) {
                view = new Document(Fields.ID, ref.id());
                view.putAll(undo);
                version = Versions.of(undo);
            }
        }
        List<Object> markers = view.containsKey(Fields.MARKERS) ? view.getList(Fields.MARKERS, Object.class) : null;
        if (markers != null) {
            for (Object marker : markers) {
                if (Ids.sameId(marker, lockTx)) {
                    continue;
                }
                Document entry = entryOf(doc, marker);
                if (entry != null) {
                    // Two-round rules: committed adds what waits for the release, anything else takes back the hold.
                    requireSameCoordinator(ref, marker, entry);
                    boolean committed = committedWith(transaction.apply(marker), entry);
                    if (committed) {
                        committedMet.accept(marker); // committed, not released yet: anyone may roll it forward
                        version++; // its release counts its commit
                    }
                    Document amounts = entry.get(committed ? EntryName.LATER : EntryName.NOW, Document.class);
                    if (amounts != null) {
                        Increments.add(view, amounts, committed ? +1 : -1);
                    }
                    continue;
                }
                Document tx = known(ref, marker, transaction);
                if (!isCommitted(tx)) {
                    Document increments = Increments.of(operationsOf.apply(tx), ref);
                    if (increments != null) {
                        Increments.add(view, increments, -1);
                    }
                } else {
                    version++; // a tutorial-rules increment committed: its release counts it
                }
            }
            if (lock != null && Boolean.TRUE.equals(lock.get("noMarkers"))) {
                view.remove(Fields.MARKERS); // the document had no marker array before it was taken
            } else {
                view.put(Fields.MARKERS, new ArrayList<>());
            }
        }
        view.keySet().removeIf(EntryName::isEntry);
        view.remove(Versions.FIELD);
        return new CommittedImage(view, version);
    }

    /**
     * The transaction {@code id} that {@code ref} names. One this coordinator does not know (run by
     * a coordinator with another transactions collection, or removed while its marker stayed) has
     * a state and operations this reader cannot see: refuse rather than guess.
     */
    Document known(DocumentRef ref, Object id, Function<Object, Document> transaction) {
        Document tx = transaction.apply(id);
        if (tx == null) {
            throw new UnknownTransactionException("cannot read " + ref + " as committed: it names transaction " + id
                    + ", which is not in " + store.collection().getNamespace().getFullName()
                    + " (all transactions on a document read as committed must share one transactions collection)",
                    id, null);
        }
        return tx;
    }

    /** A document names a transaction that this reader's transactions collection does not hold. */
    static final class UnknownTransactionException extends TransactionException {
        UnknownTransactionException(String message, Object transactionId, TransactionState lastKnownState) {
            super(message, transactionId, lastKnownState);
        }
    }

    /** The two-round entry of transaction {@code marker} on {@code doc}, or null (a transaction of the tutorial's rules). */
    public static Document entryOf(Document doc, Object marker) {
        return EntryName.supports(marker) && doc.get(EntryName.of(marker)) instanceof Document entry ? entry : null;
    }

    /** True if {@code transaction} (or null: no document) is committed and is the one that wrote {@code entry} (same nonce). */
    public static boolean committedWith(Document transaction, Document entry) {
        return transaction != null && isCommitted(transaction)
                && Objects.equals(transaction.get(TwoRoundFields.NONCE), entry.get(EntryName.NONCE));
    }

    /** An entry written by a coordinator with another transactions collection cannot be judged here: refused, not guessed. */
    void requireSameCoordinator(DocumentRef ref, Object marker, Document entry) {
        String mine = store.collection().getNamespace().getFullName();
        if (!mine.equals(entry.get(EntryName.COORDINATOR))) {
            throw new UnknownTransactionException("cannot read " + ref + " as committed: it names transaction " + marker
                    + " of " + entry.get(EntryName.COORDINATOR) + ", not of " + mine
                    + " (all transactions on a document read as committed must share one transactions collection)", marker, null);
        }
    }

    /**
     * True if {@code transaction} (or null: no document) counts as committed: applied or done, and
     * not a commit written after its deadline ({@link LateCommit}), which counts as canceled.
     */
    static boolean isCommitted(Document transaction) {
        if (transaction == null) {
            return false;
        }
        return LateCommit.counted(transaction).map(s -> s == TransactionState.APPLIED || s == TransactionState.DONE).orElse(false);
    }
}
