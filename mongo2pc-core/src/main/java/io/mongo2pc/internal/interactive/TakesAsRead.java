package io.mongo2pc.internal.interactive;

import io.mongo2pc.internal.format.Ids;
import com.mongodb.MongoException;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.internal.format.CommittedImage;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Versions;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Attempt;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Kind;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Prepared;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.reads.CommittedReader;
import io.mongo2pc.internal.reads.ConsistentCut;
import io.mongo2pc.internal.tworound.TwoRoundContext;
import io.mongo2pc.internal.wire.WriteCombiner;
import io.mongo2pc.spi.CrashPoint.Step;
import org.bson.Document;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The optimistic takes of an interactive transaction's attempt (docs/INTERACTIVE.md, "Committing"):
 * the one-write take of a document written (lock, change, before-image and version + 1) and the take
 * of a delete, each only where the document is as read (its committed version, no marker, no lock
 * but perhaps the committed update's lock it was read under, which the take replaces),
 * sent on its own or several of one collection in one request. Each is answered in effect, or with
 * why not (changed, held, expired, refused, in doubt), from the write's answer or else from its
 * document read back. Thread-safe (stateless but for its context).
 */
final class TakesAsRead {
    private final TwoRoundContext c;
    private final ConsistentCut cut;
    private final InteractiveWrites writes;

    TakesAsRead(TwoRoundContext c, ConsistentCut cut, InteractiveWrites writes) {
        this.c = c;
        this.cut = cut;
        this.writes = writes;
    }

    /**
     * The filter of a document as read: its stored version the committed version read, no marker, no
     * lock (or {@code overLock}, the committed update's lock it was read under, if not null), before the deadline.
     */
    private static Document asRead(Attempt a, DocumentRef ref, long version, Document overLock) {
        Document filter = new Document(Fields.ID, ref.id()).append(Versions.FIELD, Versions.filter(version))
                .append(Fields.MARKERS + ".0", new Document("$exists", false));
        Document free = new Document(Fields.LOCK, new Document("$exists", false));
        if (overLock == null) {
            filter.putAll(free);
        } else {
            filter.append("$or", List.of(free, new Document(Fields.LOCK_TX, overLock.get("tx"))
                    .append(Fields.LOCK + "." + EntryName.NONCE, overLock.get(EntryName.NONCE)).append(Fields.LOCK + ".kind", "update")));
        }
        return Participants.fenced(filter, a.until());
    }

    /** True if {@code lock} is {@code overLock} (the same transaction and nonce), the committed lock a take may replace. */
    private static boolean isOverLock(Document lock, Document overLock) {
        return overLock != null && Ids.sameId(lock.get("tx"), overLock.get("tx"))
                && java.util.Objects.equals(lock.get(EntryName.NONCE), overLock.get(EntryName.NONCE));
    }

    /** The before-image kept in the lock: the content as read, its version included. */
    private static Document undoImage(Document content, long version) {
        Document undo = new Document(content);
        undo.remove(Fields.ID);
        if (version != 0) {
            undo.put(Versions.FIELD, version);
        }
        return undo;
    }

    /** An update: taken and changed in one write, if the document is as read. */
    Prepared takeAndChange(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock, Document after) {
        return asReadWrite(a, index, ref, read, overLock, takeAndChangeWrite(a, ref, read, overLock, after));
    }

    /** The write of {@link #takeAndChange}. */
    UpdateOneModel<Document> takeAndChangeWrite(Attempt a, DocumentRef ref, CommittedImage read, Document overLock, Document after) {
        Document update = InteractiveWrites.diff(read.content(), after);
        Document set = update.get("$set", Document.class);
        set.put(Versions.FIELD, read.version() + 1);
        set.put(Fields.LOCK, writes.lock(a, "update").append(Exclusive.UNDO, undoImage(read.content(), read.version())));
        return new UpdateOneModel<>(asRead(a, ref, read.version(), overLock), update);
    }

    /** A delete: the document taken for it, if as read (its release deletes it). */
    Prepared takeForDelete(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock) {
        return asReadWrite(a, index, ref, read, overLock, takeForDeleteWrite(a, ref, read, overLock));
    }

    /** The write of {@link #takeForDelete}. */
    UpdateOneModel<Document> takeForDeleteWrite(Attempt a, DocumentRef ref, CommittedImage read, Document overLock) {
        return new UpdateOneModel<>(asRead(a, ref, read.version(), overLock),
                new Document("$set", new Document(Fields.LOCK, writes.lock(a, "delete"))));
    }

    private Prepared asReadWrite(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock, UpdateOneModel<Document> write) {
        c.crashPoints().before(Step.APPLY, index, a.id());
        return settled(a, index, ref, read, overLock, write, known(c.targets().combiner(ref).answer(write)));
    }

    /**
     * Several takes of documents as read in one collection ({@link #takeAndChangeWrite},
     * {@link #takeForDeleteWrite}), sent by the calling thread in one request: each write is the one
     * {@link #takeAndChange} or {@link #takeForDelete} sends, between the same crash points. When the
     * request's answer does not say which took effect (one matched nothing, or the server refused
     * one), the documents are read back in one request: a take whose document carries this
     * attempt's lock is in effect, another is told why not from what its document shows; only a take
     * whose document shows neither (still as read) is settled on its own, as they settle it. The
     * answers in order; throws what a crash point or a lasting error throws (then every write is in doubt).
     */
    Prepared[] takeAll(Attempt a, int[] indexes, List<DocumentRef> refs, List<CommittedImage> reads, List<Document> overLocks,
                       List<UpdateOneModel<Document>> sent) {
        for (int index : indexes) {
            c.crashPoints().before(Step.APPLY, index, a.id());
        }
        WriteCombiner.Answer[] answers = c.targets().combiner(refs.get(0)).answers(sent);
        Prepared[] known = new Prepared[sent.size()];
        for (int i = 0; i < known.length; i++) {
            known[i] = known(answers[i]);
        }
        readBack(a, refs, reads, overLocks, known);
        Prepared[] prepared = new Prepared[sent.size()];
        for (int i = 0; i < prepared.length; i++) {
            prepared[i] = settled(a, indexes[i], refs.get(i), reads.get(i), overLocks.get(i), sent.get(i), known[i]);
        }
        return prepared;
    }

    /** What an answer of the combiner says of a take: in effect, in doubt, or null when not known. */
    private static Prepared known(WriteCombiner.Answer answer) {
        return switch (answer) {
            case MATCHED -> Prepared.IN_EFFECT;
            case IN_DOUBT -> Prepared.IN_DOUBT;
            case NOT_KNOWN -> null;
        };
    }

    /**
     * Settles the takes of {@code known} not known yet (null) from their documents, read in one
     * request (with, in one more, the transactions whose locks are on them): in effect or why not
     * ({@link #shown}). A take its document does not settle stays null; all do when the read fails.
     */
    private void readBack(Attempt a, List<DocumentRef> refs, List<CommittedImage> reads, List<Document> overLocks, Prepared[] known) {
        List<DocumentRef> unknown = new ArrayList<>();
        for (int i = 0; i < known.length; i++) {
            if (known[i] == null) {
                unknown.add(refs.get(i));
            }
        }
        if (unknown.isEmpty()) {
            return;
        }
        List<Document> stored;
        Map<Object, Document> holders = new HashMap<>();
        try {
            stored = cut.readAll(unknown);
            Set<Object> held = new LinkedHashSet<>();
            for (Document doc : stored) {
                Document lock = doc == null ? null : doc.get(Fields.LOCK, Document.class);
                if (Exclusive.isTwoRound(lock) && !Exclusive.isOf(lock, a.id(), a.nonce())) {
                    held.add(lock.get("tx"));
                }
            }
            if (!held.isEmpty()) {
                c.store().findAll(List.copyOf(held)).forEach(tx -> holders.put(Ids.key(tx.get(Fields.ID)), tx));
            }
        } catch (MongoException e) {
            return; // each settled on its own
        }
        for (int i = 0, u = 0; i < known.length; i++) {
            if (known[i] == null) {
                known[i] = shown(a, refs.get(i), reads.get(i), overLocks.get(i), stored.get(u++), id -> holders.get(Ids.key(id)));
            }
        }
    }

    /**
     * A take as read past its crash point before, its answer {@code known} if its first sending gave
     * one (in effect, in doubt, or why not); else sent again on its own, then read back if it matched nothing.
     */
    private Prepared settled(Attempt a, int index, DocumentRef ref, CommittedImage read, Document overLock, UpdateOneModel<Document> write,
                             Prepared known) {
        return writes.afterBefore(a, Step.APPLY, index, ref, () -> known != null ? known
                : c.targets().collection(ref).updateOne(write.getFilter(), write.getUpdate()).getMatchedCount() == 1
                ? Prepared.IN_EFFECT : whyNot(a, ref, read, overLock));
    }

    /** Why a take of a document as read matched nothing, read back. */
    private Prepared whyNot(Attempt a, DocumentRef ref, CommittedImage read, Document overLock) {
        Document current = c.targets().collection(ref).find(new Document(Fields.ID, ref.id())).projection(Projections.exclude("__none")).first();
        Prepared shown = shown(a, ref, read, overLock, current, c.store()::find);
        if (shown != null) {
            return shown;
        }
        if (c.targets().collection(ref).find(Participants.fenced(new Document(Fields.ID, ref.id()), a.until()))
                .projection(Projections.include(Fields.ID)).first() == null) {
            return Prepared.EXPIRED;
        }
        return new Prepared(Kind.CHANGED, ref + " changed while it was taken", null); // a race: read it again
    }

    /**
     * What {@code current}, the stored document of a take as read whose request was answered, shows
     * of it: in effect (this attempt's lock on it: a lost answer), else why not (deleted, held by the
     * transaction {@code transactions} finds for its lock, or by markers, changed); null if it still
     * shows the document as read (the take would match), {@code overLock} (the committed lock it was
     * read under, or null) still on it or not.
     */
    private static Prepared shown(Attempt a, DocumentRef ref, CommittedImage read, Document overLock, Document current,
                                  Function<Object, Document> transactions) {
        if (current == null) {
            return new Prepared(Kind.CHANGED, ref + " was deleted since it was read", null);
        }
        Document lock = current.get(Fields.LOCK, Document.class);
        if (lock != null && Exclusive.isOf(lock, a.id(), a.nonce())) {
            return Prepared.IN_EFFECT; // taken before: a lost answer
        }
        if (lock != null && !isOverLock(lock, overLock)) {
            // Taken by a transaction that committed (its release still to come): the document changed since it was read.
            boolean committed = Exclusive.isTwoRound(lock) && CommittedReader.committedWith(transactions.apply(lock.get("tx")), lock);
            return new Prepared(committed ? Kind.CHANGED : Kind.HELD, ref + (committed ? " was changed by transaction "
                    : " is taken by transaction ") + lock.get("tx"), lock.get("tx"));
        }
        List<Object> markers = current.getList(Fields.MARKERS, Object.class, List.of());
        if (!markers.isEmpty()) {
            return new Prepared(Kind.HELD, ref + " has pending transactions " + markers, markers.get(0));
        }
        if (Versions.of(current) != read.version()) {
            return new Prepared(Kind.CHANGED, ref + " was changed since it was read (version " + read.version() + ", now "
                    + Versions.of(current) + ")", null);
        }
        return null;
    }
}
