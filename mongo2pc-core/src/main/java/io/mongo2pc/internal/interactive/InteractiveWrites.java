package io.mongo2pc.internal.interactive;

import com.mongodb.MongoException;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Attempt;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Kind;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Prepared;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Taken;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.LockedWrites;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import io.mongo2pc.internal.reads.CommittedReader;
import io.mongo2pc.internal.tworound.TwoRoundContext;
import io.mongo2pc.internal.wire.Retrier;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;

import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The participant writes of an interactive transaction's attempt (docs/INTERACTIVE.md, "Committing")
 * other than the takes of documents as read ({@link TakesAsRead}): the two-round insert, and the
 * pessimistic take of a document read (its lock set even over increments in flight, which then
 * drain) with its change under the lock later; and what they share: the lock, the diff, a write
 * between its crash points. Each write is answered in effect, or with why not (changed, held,
 * expired, refused, in doubt). Thread-safe (stateless but for its context).
 */
final class InteractiveWrites {
    private final TwoRoundContext c;

    InteractiveWrites(TwoRoundContext c) {
        this.c = c;
    }

    /** The lock an attempt writes: a two-round lock with the attempt's priority. */
    Document lock(Attempt a, String kind) {
        return new Document("tx", a.id()).append("kind", kind).append(EntryName.COORDINATOR, c.entries().coordinator())
                .append(EntryName.NONCE, a.nonce()).append(EntryName.UNTIL, Date.from(a.until())).append(Priority.FIELD, a.priority().written());
    }

    /** {@code $set} of the fields of {@code after} that differ from {@code before}, {@code $unset} of those it lacks. */
    static Document diff(Document before, Document after) {
        Document set = new Document();
        Document unset = new Document();
        after.forEach((field, value) -> {
            if (!field.equals(Fields.ID) && !Objects.equals(before.get(field), value)) {
                set.put(field, value);
            }
        });
        before.keySet().forEach(field -> {
            if (!field.equals(Fields.ID) && !after.containsKey(field)) {
                unset.put(field, "");
            }
        });
        Document update = new Document("$set", set);
        return unset.isEmpty() ? update : update.append("$unset", unset);
    }

    /**
     * A write of the attempt between its crash points, retried through transient errors: its answer,
     * in doubt when it failed without one, refused when the server refused it for good.
     */
    private Prepared answered(Attempt a, Step step, int index, DocumentRef ref, Supplier<Prepared> write) {
        c.crashPoints().before(step, index, a.id());
        return afterBefore(a, step, index, ref, write);
    }

    /** {@link #answered} past its crash point before. */
    Prepared afterBefore(Attempt a, Step step, int index, DocumentRef ref, Supplier<Prepared> write) {
        return c.retrier().call(step.name().toLowerCase(Locale.ROOT), a.id(), TransactionState.PENDING, () -> {
            try {
                return c.crashPoints().after(write.get(), step, index, a.id());
            } catch (MongoServerException e) {
                if (Retrier.isTransient(e)) {
                    throw e;
                }
                return new Prepared(Kind.REFUSED, "the database refused the write of " + ref + ": " + Exclusive.serverMessage(e), null);
            } catch (MongoException e) {
                if (Retrier.isInDoubt(e)) {
                    return Prepared.IN_DOUBT;
                }
                throw e;
            }
        });
    }

    /** An insert: the two-round insert of {@code content} (a new document, taken until the release). */
    Prepared insert(Attempt a, int index, DocumentRef ref, Document content) {
        c.crashPoints().before(Step.APPLY, index, a.id());
        MongoCollection<Document> coll = c.targets().collection(ref);
        return c.retrier().call("prepare", a.id(), TransactionState.PENDING, () -> {
            Participants.Result r;
            try {
                r = Exclusive.take(coll, Operation.insert(ref, content), a.id(), a.nonce(), a.priority(), a.until(),
                        c.entries().coordinator()).result();
            } catch (MongoException e) {
                if (Retrier.isInDoubt(e)) {
                    return Prepared.IN_DOUBT;
                }
                throw e;
            }
            Prepared result = switch (r.kind()) {
                case DONE -> Prepared.IN_EFFECT;
                case EXPIRED -> Prepared.EXPIRED;
                // In the way when sent, gone when read (another transaction's insert undone): a conflict, not a refusal.
                case BUSY -> new Prepared(Kind.CHANGED, r.reason(), null);
                default -> {
                    // The document in the way as the insert read it (no second read: it may be gone by then).
                    Document lock = r.seen() == null ? null : r.seen().get(Fields.LOCK, Document.class);
                    yield r.code() != ReasonCode.DOCUMENT_EXISTS ? new Prepared(Kind.REFUSED, r.reason(), null)
                            : lock != null ? new Prepared(Kind.HELD, ref + " is being inserted by transaction " + lock.get("tx"), lock.get("tx"))
                            : new Prepared(Kind.CHANGED, ref + " was inserted since it was read", null);
                }
            };
            return c.crashPoints().after(result, Step.APPLY, index, a.id());
        });
    }

    /**
     * The pessimistic take of a document read: the lock set where no lock is and, with
     * {@code overMarkers}, over markers of increments in flight (no new prepare can come once it is
     * there); then, once the markers have drained, the document as stored. Else what holds it: another transaction's lock (committed transactions
     * met are rolled forward first), or the markers still on the document this attempt took.
     */
    Taken take(Attempt a, int index, DocumentRef ref, boolean overMarkers) {
        MongoCollection<Document> coll = c.targets().collection(ref);
        Document filter = Participants.fenced(new Document(Fields.ID, ref.id()).append(Fields.LOCK, new Document("$exists", false)), a.until());
        if (!overMarkers) {
            filter.append(Fields.MARKERS + ".0", new Document("$exists", false));
        }
        Document update = new Document("$set", new Document(Fields.LOCK, lock(a, "update")));
        for (int round = 0; ; round++) {
            c.crashPoints().before(Step.APPLY, index, a.id());
            Document before = c.retrier().call("take", a.id(), TransactionState.PENDING, () -> c.crashPoints().after(
                    coll.findOneAndUpdate(filter, update, new FindOneAndUpdateOptions().projection(Projections.exclude("__none"))
                            .returnDocument(ReturnDocument.BEFORE)), Step.APPLY, index, a.id()));
            Document current = before != null ? before : c.retrier().call("read", a.id(), null, () -> coll.find(new Document(Fields.ID,
                    ref.id())).projection(Projections.exclude("__none")).first());
            if (current == null) {
                return new Taken(Kind.CHANGED, null, ref + " does not exist", null, null, false);
            }
            Document lock = current.get(Fields.LOCK, Document.class);
            boolean ours = before != null || lock != null && Exclusive.isOf(lock, a.id(), a.nonce());
            List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
            if (!ours && lock == null && (overMarkers || markers.isEmpty())) {
                continue; // freed between the take and the read: take again
            }
            if (ours && markers.isEmpty()) {
                return new Taken(Kind.IN_EFFECT, current, null, null, null, true);
            }
            if (round < 3 && c.retrier().call("resolve markers", a.id(), null,
                    () -> c.resolver().resolve(coll, current, a.id(), a.nonce())) > 0) {
                continue; // committed (or abandoned) transactions met were rolled forward (or undone): again
            }
            if (!ours && lock == null) {
                return new Taken(Kind.HELD, current, ref + " has pending transactions " + markers, markers.get(0), oldest(current, markers), false);
            }
            if (!ours) {
                return new Taken(Kind.HELD, current, ref + " is taken by transaction " + lock.get("tx"), lock.get("tx"),
                        Priority.of(lock), false);
            }
            if (coll.find(Participants.fenced(new Document(Fields.ID, ref.id()), a.until())).projection(Projections.include(Fields.ID))
                    .first() == null) {
                return new Taken(Kind.EXPIRED, current, "the attempt passed its deadline " + a.until(), null, null, true);
            }
            // Taken, with increments in flight on it: they drain (none can come while the lock is there).
            return new Taken(Kind.HELD, current, ref + " has pending transactions " + markers, markers.get(0), oldest(current, markers), true);
        }
    }

    /** The oldest priority among the markers' entries on {@code doc}; null if one has none (it counts as older than all). */
    private static Priority oldest(Document doc, List<Object> markers) {
        Priority oldest = null;
        for (Object marker : markers) {
            Priority p = Priority.of(CommittedReader.entryOf(doc, marker));
            if (p == null) {
                return null;
            }
            oldest = oldest == null || p.compareTo(oldest) < 0 ? p : oldest;
        }
        return oldest;
    }

    /** A pessimistic attempt's change of a document it took: the diff, version + 1, the before-image in the lock. */
    Prepared change(Attempt a, int index, DocumentRef ref, Document stored, Document after) {
        Document before = LockedWrites.strip(stored); // the before-image: its version included
        Document content = new Document(before);
        content.remove(Versions.FIELD);
        Document update = diff(content, after);
        update.get("$set", Document.class).append(Versions.FIELD, Versions.of(stored) + 1).append(Fields.LOCK_UNDO, before);
        return underLock(a, index, ref, update);
    }

    /** A pessimistic attempt's delete of a document it took: the lock becomes a delete's (its release deletes). */
    Prepared markDelete(Attempt a, int index, DocumentRef ref) {
        return underLock(a, index, ref, new Document("$set", new Document(Fields.LOCK + ".kind", "delete")));
    }

    private Prepared underLock(Attempt a, int index, DocumentRef ref, Document update) {
        MongoCollection<Document> coll = c.targets().collection(ref);
        Document filter = Participants.fenced(Exclusive.locked(ref.id(), a.id(), a.nonce()), a.until())
                .append(Fields.LOCK_UNDO, new Document("$exists", false)).append(Fields.LOCK + ".kind", "update")
                .append(Fields.MARKERS + ".0", new Document("$exists", false)); // drained: the stored value is the committed one
        return answered(a, Step.CHANGE, index, ref,
                () -> coll.updateOne(filter, update).getMatchedCount() == 1 ? Prepared.IN_EFFECT : changedBefore(coll, a, ref));
    }

    /** After a change under the lock matched nothing: made before (a lost answer), else the lock is gone or the deadline passed. */
    private static Prepared changedBefore(MongoCollection<Document> coll, Attempt a, DocumentRef ref) {
        Document current = coll.find(Exclusive.locked(ref.id(), a.id(), a.nonce())).projection(Projections.include(Fields.LOCK)).first();
        Document lock = current == null ? null : current.get(Fields.LOCK, Document.class);
        return lock != null && (lock.containsKey(Exclusive.UNDO) || "delete".equals(lock.get("kind"))) ? Prepared.IN_EFFECT : Prepared.EXPIRED;
    }

    /** Removes the lock of a document the attempt only read (taken by a pessimistic read), by its nonce alone. */
    void unlock(Attempt a, DocumentRef ref) {
        MongoCollection<Document> coll = c.targets().collection(ref);
        c.retrier().call("unlock", a.id(), null, () -> coll.updateOne(Exclusive.locked(ref.id(), a.id(), a.nonce())
                .append(Fields.LOCK_UNDO, new Document("$exists", false)).append(Fields.LOCK + ".kind", "update"),
                new Document("$unset", new Document(Fields.LOCK, ""))).getMatchedCount());
    }
}
