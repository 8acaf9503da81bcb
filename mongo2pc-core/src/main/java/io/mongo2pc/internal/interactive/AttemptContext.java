package io.mongo2pc.internal.interactive;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionContext;
import io.mongo2pc.internal.format.CommittedImage;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Kind;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Reading;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Taken;
import io.mongo2pc.internal.participants.Priority;
import org.bson.Document;
import org.bson.conversions.Bson;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One attempt's {@link TransactionContext} (docs/INTERACTIVE.md, "Reading"): its buffer of
 * documents, each read once (optimistically: the committed image and version, waiting for another
 * transaction's lock not committed; after a conflict: taken, wait-die by priority), then answered
 * from the buffer with the body's writes applied. A conflict met while reading ends the attempt:
 * {@link Lost} is thrown and kept, so the attempt cannot commit even if the body catches it.
 * Not thread-safe (synchronized against misuse from another thread).
 */
final class AttemptContext implements TransactionContext {


    private final TwoRoundAccess access;
    private final TwoRoundAccess.Attempt attempt;
    private final int number;
    private final boolean pessimistic;
    private final Waits waits;
    private final Map<DocumentRef, Entry> buffer = new LinkedHashMap<>();
    /** Documents {@link #getAll} read carrying what other transactions left on them, as stored: not in the buffer yet. */
    private final Map<DocumentRef, Document> unclean = new HashMap<>();
    private Lost lost;
    /** A document this attempt took and waits to drain of increments (not in the buffer yet), or null. */
    private DocumentRef draining;
    /** A failure of the protocol while reading (a crash point, the database given up on): it ends everything as it is. */
    private RuntimeException failure;
    private boolean closed;

    AttemptContext(TwoRoundAccess access, TwoRoundAccess.Attempt attempt, int number, boolean pessimistic, Waits waits) {
        this.access = access;
        this.attempt = attempt;
        this.number = number;
        this.pessimistic = pessimistic;
        this.waits = waits;
    }

    TwoRoundAccess.Attempt handle() {
        return attempt;
    }

    boolean pessimistic() {
        return pessimistic;
    }

    /** The conflict this attempt met while the body ran, or null. */
    synchronized Lost lost() {
        return lost;
    }

    /** The protocol's failure met while the body ran, or null. */
    synchronized RuntimeException failure() {
        return failure;
    }

    /** True if the body wrote (or tried to write) a document in this attempt. */
    synchronized boolean wrote() {
        return buffer.values().stream().anyMatch(e -> e.written);
    }

    /** The document this attempt took and was waiting to drain when it ended, or null. */
    synchronized DocumentRef draining() {
        return draining;
    }

    /** The documents the attempt touched, in the order it first did. */
    synchronized Collection<Entry> entries() {
        return buffer.values();
    }

    /** Ends the body's use of this context. */
    synchronized void close() {
        closed = true;
    }

    @Override
    public synchronized Optional<Document> get(DocumentRef document) {
        Entry entry = entry(document);
        return Optional.ofNullable(entry.current).map(BsonValues::normalized);
    }

    @Override
    public synchronized List<Optional<Document>> getAll(List<DocumentRef> documents) {
        requireOpen();
        if (!pessimistic) {
            // The documents not read yet, in one request per collection; one that other transactions left
            // something on is read on its own (what committed rolled forward first).
            List<DocumentRef> unread = new ArrayList<>();
            for (DocumentRef ref : documents) {
                DocumentRef key = ref.withComparableId();
                if (!buffer.containsKey(key) && !unread.contains(key)) {
                    access.checkReference(ref);
                    unread.add(key);
                }
            }
            if (unread.size() > 1) {
                // What other transactions left on a document is not judged here: its own read resolves it first.
                List<Document> stored = readStored(unread);
                for (int i = 0; i < unread.size(); i++) {
                    if (Reading.isClean(stored.get(i))) {
                        Reading reading = access.cleanReading(unread.get(i), stored.get(i));
                        buffer.put(unread.get(i), new Entry(unread.get(i), buffer.size(), reading.image(), null));
                    } else {
                        unclean.put(unread.get(i), stored.get(i));
                    }
                }
            }
        }
        List<Optional<Document>> views = new ArrayList<>(documents.size());
        documents.forEach(ref -> views.add(get(ref)));
        return views;
    }

    private List<Document> readStored(List<DocumentRef> refs) {
        try {
            return access.readStored(attempt.id(), refs);
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
    }

    @Override
    public synchronized <T> Optional<T> get(DocumentRef document, Class<T> type) {
        Entry entry = entry(document);
        return Optional.ofNullable(entry.current)
                .map(doc -> Codecs.fromDocument(doc, type, access.collection(document).getCodecRegistry(), document));
    }

    @Override
    public synchronized boolean insert(DocumentRef document, Object content) {
        Document doc = stored(document, content);
        Entry entry = entry(document);
        if (entry.current != null) {
            return false;
        }
        entry.current = doc;
        entry.written = true;
        return true;
    }

    @Override
    public synchronized boolean update(DocumentRef document, Bson update) {
        requireOpen();
        Document operators = Codecs.toDocument(update, access.collection(document).getCodecRegistry(), document);
        if (operators.isEmpty() || operators.keySet().stream().noneMatch(k -> k.startsWith("$"))) {
            throw new InvalidTransactionException(document + ": update needs update operators ($set, $inc, ...); use replace for a whole document");
        }
        access.check(Operation.update(document, operators, null));
        UpdateOperators.check(operators, document);
        Entry entry = entry(document);
        if (entry.current == null) {
            return false;
        }
        entry.current = UpdateOperators.apply(entry.current, operators, document);
        entry.written = true;
        return true;
    }

    @Override
    public synchronized boolean replace(DocumentRef document, Object content) {
        Document doc = stored(document, content);
        Entry entry = entry(document);
        if (entry.current == null) {
            return false;
        }
        if (entry.current.containsKey(Fields.MARKERS) && !doc.containsKey(Fields.MARKERS)) {
            doc.put(Fields.MARKERS, entry.current.get(Fields.MARKERS)); // a tutorial account keeps its marker array
        }
        entry.current = doc;
        entry.written = true;
        return true;
    }

    @Override
    public synchronized boolean delete(DocumentRef document) {
        requireOpen();
        access.checkReference(document);
        Entry entry = entry(document);
        if (entry.current == null) {
            return false;
        }
        entry.current = null;
        entry.written = true;
        return true;
    }

    @Override
    public Object transactionId() {
        return attempt.id();
    }

    @Override
    public int attempt() {
        return number;
    }

    /** {@code content} as the document to store under {@code ref}: checked, its {@code _id} the reference's. */
    private Document stored(DocumentRef ref, Object content) {
        requireOpen();
        Document doc = Codecs.toDocument(content, access.collection(ref).getCodecRegistry(), ref);
        access.check(Operation.insert(ref, doc));
        Document withId = new Document("_id", ref.id());
        doc.forEach((k, v) -> {
            if (!k.equals("_id")) {
                withId.put(k, v);
            }
        });
        return withId;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the context of attempt " + number + " of transaction " + attempt.id()
                    + " was used after its body returned");
        }
        if (lost != null) {
            throw lost; // the attempt is over: the body runs again
        }
    }

    /** The buffered entry of {@code ref}, read now if the attempt has not touched it yet. */
    private Entry entry(DocumentRef ref) {
        requireOpen();
        DocumentRef key = ref.withComparableId();
        Entry entry = buffer.get(key);
        if (entry != null) {
            return entry;
        }
        access.checkReference(ref);
        try {
            entry = pessimistic ? take(key) : read(key, unclean.remove(key));
        } catch (Lost e) {
            lost = e;
            throw e;
        } catch (InvalidTransactionException e) {
            throw e;
        } catch (RuntimeException | Error e) {
            failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
            throw e;
        }
        buffer.put(key, entry);
        return entry;
    }

    /**
     * An optimistic read: the committed image and version. What committed transactions left on the
     * document is rolled forward first, so that the attempt's write finds it clean, but for a committed
     * update's lock alone, which the attempt's take may replace instead; what others hold
     * and have not committed is not waited for (the view leaves it out, as readCommitted does; a
     * write of the attempt to that document will then meet it at the commit and lose).
     * {@code readBefore}: the document as {@link #getAll} found it (not clean), resolved first; or null.
     */
    private Entry read(DocumentRef ref, Document readBefore) {
        int first = 0;
        if (readBefore != null) {
            // Under a committed update's lock alone: committed as stored, its lock one the take may replace.
            Reading over = access.overCommittedLock(attempt.id(), ref, readBefore);
            if (over != null) {
                return new Entry(ref, buffer.size(), over.image(), null, over.replaceableLock());
            }
            if (access.resolve(attempt, ref, readBefore) > 0) {
                first = 1; // what getAll found on it resolved: read it now as after a first round
            }
        }
        for (int round = first; ; round++) {
            Reading reading = access.read(attempt.id(), ref);
            Document over = reading.replaceableLock();
            if (reading.clean() || over != null || round >= 3 || access.resolve(attempt, ref, reading.stored()) == 0) {
                return new Entry(ref, buffer.size(), reading.image(), null, over);
            }
        }
    }

    /**
     * A pessimistic read: the document taken for this attempt, over increments in flight if need be
     * (they drain: none can come while the lock is there). Who meets whom is settled by
     * {@link Priority}, as between fixed-operation transactions (docs/CONFLICTS.md): an attempt that
     * holds something (its lock over draining increments included) and meets an older holder (or one
     * without a priority) ends at once and gives back what it holds; otherwise it waits, for a
     * younger holder (which commits, or gives way when it meets what this attempt holds) or, holding
     * nothing, for anyone, each wait at most conflictTimeout.
     */
    private Entry take(DocumentRef ref) {
        long heldSince = 0;
        for (int round = 0; ; round++) {
            Taken taken = access.take(attempt, buffer.size(), ref, true);
            switch (taken.kind()) {
                case IN_EFFECT -> {
                    draining = null;
                    Document stored = taken.stored();
                    Document content = new Document(stored);
                    content.remove(Fields.LOCK);
                    content.remove(Versions.FIELD);
                    return new Entry(ref, buffer.size(), new CommittedImage(content, Versions.of(stored)), stored);
                }
                case CHANGED -> {
                    return new Entry(ref, buffer.size(), CommittedImage.NONE, null); // missing: checked at the commit
                }
                case EXPIRED -> throw new Lost(ConflictKind.EXPIRED, ref, null, taken.reason());
                default -> {
                    if (taken.locked()) {
                        draining = ref; // taken: given back with the rest if the attempt ends here
                    }
                    boolean ownEarlierAttempt = attempt.id().equals(taken.heldBy()); // resolved past its deadline
                    // A lock over draining increments is a hold too: someone older may wait for it.
                    if (!ownEarlierAttempt && attempt.priority().yieldsTo(taken.holderPriority()) && (holdsAny() || taken.locked())) {
                        throw new Lost(ConflictKind.HELD, ref, taken.heldBy(), taken.reason() + ", an older transaction");
                    }
                    heldSince = heldSince == 0 ? waits.now() : heldSince;
                    if (waits.now() - heldSince > access.settings().conflictTimeout().toNanos()) {
                        throw new Lost(ConflictKind.HELD, ref, taken.heldBy(), taken.reason() + " for longer than conflictTimeout");
                    }
                    waits.pause(round, ConflictKind.HELD, ref, taken.heldBy(), taken.reason());
                }
            }
        }
    }

    /** True if this attempt has taken a document (a pessimistic read): others may be waiting for it. */
    private boolean holdsAny() {
        return buffer.values().stream().anyMatch(e -> e.taken != null);
    }

    /** Kinds of a take's answer other than in effect that end the attempt here (for the commit). */
    static ConflictKind conflictOf(Kind kind) {
        return switch (kind) {
            case CHANGED -> ConflictKind.CHANGED;
            case HELD -> ConflictKind.HELD;
            default -> ConflictKind.EXPIRED;
        };
    }
}
