package io.mongo2pc.internal.tworound;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoServerException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.result.UpdateResult;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.format.TwoRoundFields;
import io.mongo2pc.internal.participants.Entries;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Inserts;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.TransactionStore;
import io.mongo2pc.internal.wire.ServerClock;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;
import org.bson.Document;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Meeting a marker of a two-round transaction (docs/TWO-ROUND.md, "Meeting a marker"): whoever
 * finds another transaction's marker with its entry on a participant reads that transaction's
 * document and acts by it. Committed (same nonce): roll forward (the release). Canceled: undo; a
 * commit written after its deadline counts as canceled ({@link LateCommit}): repaired, then undone.
 * Pending, canceling: nothing (recovery takes it over once its lease ran out). No document, or one
 * with another nonce: once the server's clock is past the entry's deadline plus the clock skew
 * allowed, no prepare of it can take effect any more: a tombstone (a canceled document, inserted
 * only if none exists) makes its late insert fail, then the entry is undone. Thread-safe.
 * Public for the recovery and interactive packages and Engine, as are the members they use.
 */
public final class Resolver {
    public static final String TOMBSTONE = "tombstone";

    private final TransactionStore store;
    private final ServerClock clock;
    private final Duration maxClockSkew;
    private final String coordinator;
    private final CrashHook crashHook;

    public Resolver(TransactionStore store, ServerClock clock, Duration maxClockSkew, String coordinator, CrashHook crashHook) {
        this.store = store;
        this.clock = clock;
        this.maxClockSkew = maxClockSkew;
        this.coordinator = coordinator;
        this.crashHook = crashHook;
    }

    /**
     * Resolves what can be resolved of the entries on {@code doc} (as read from {@code coll}) of
     * transactions other than {@code own} (its id with its nonce {@code ownNonce}: an entry of the
     * same id under another nonce is another run's, resolved like any other); returns how many
     * entries it removed.
     */
    public int resolve(MongoCollection<Document> coll, Document doc, Object own, String ownNonce) {
        return resolve(coll, doc, own, ownNonce, id -> { });
    }

    /** {@link #resolve(MongoCollection, Document, Object, String)}, telling {@code tombstoned} each id it wrote a tombstone for. */
    public int resolve(MongoCollection<Document> coll, Document doc, Object own, String ownNonce, Consumer<Object> tombstoned) {
        int removed = 0;
        Supplier<Instant> now = new Supplier<>() {
            private Instant read;

            @Override
            public Instant get() {
                return read == null ? (read = clock.now()) : read;
            }
        };
        for (Object marker : new ArrayList<>(doc.getList(Fields.MARKERS, Object.class, List.of()))) {
            if (!EntryName.supports(marker)) {
                continue; // no entry is named after such an id: a transaction of the tutorial's rules
            }
            Document entry = doc.get(EntryName.of(marker)) instanceof Document d ? d : null;
            if (own != null && Ids.sameId(marker, own) && (entry == null || java.util.Objects.equals(ownNonce, entry.get(EntryName.NONCE)))) {
                continue;
            }
            if (entry == null || !coordinator.equals(entry.get(EntryName.COORDINATOR))
                    || !(entry.get(EntryName.NONCE) instanceof String nonce) || !(entry.get(EntryName.UNTIL) instanceof Date until)) {
                continue; // a transaction of the tutorial's rules, or of another coordinator: not ours to judge
            }
            Object docId = doc.get(Fields.ID);
            if (resolveOne(marker, nonce, until.toInstant(), now, tombstoned,
                    () -> write(coll, docId, marker, nonce, Entries.releaseWrite(docId, marker, nonce, entry.get(EntryName.LATER, Document.class))),
                    () -> write(coll, docId, marker, nonce, Entries.undoWrite(docId, marker, nonce, entry.get(EntryName.NOW, Document.class), null)))) {
                removed++;
            }
        }
        Document lock = Exclusive.lockOf(doc);
        if (lock != null && Inserts.isLate(doc)) {
            // A late copy of an insert reads as never written, whatever its transaction's state: it
            // is removed (while still late), never rolled forward (its document may have been
            // deleted after the commit).
            Inserts.deleteLate(coll, doc.get(Fields.ID), doc);
            return removed + 1;
        }
        if (lock != null && coordinator.equals(lock.get(EntryName.COORDINATOR)) && lock.get(EntryName.UNTIL) instanceof Date until
                && !(own != null && Exclusive.isOf(lock, own, ownNonce))) {
            Object txId = lock.get("tx");
            Object docId = doc.get(Fields.ID);
            String nonce = lock.getString(EntryName.NONCE);
            if (resolveOne(txId, nonce, until.toInstant(), now, tombstoned,
                    () -> exclusive(txId, () -> Exclusive.release(coll, docId, txId, lock)),
                    () -> exclusive(txId, () -> Exclusive.undo(coll, docId, txId, nonce, lock.getString("kind"), null)))) {
                removed++;
            }
        }
        return removed;
    }

    /**
     * Decides for transaction {@code txId} (of nonce {@code nonce}, prepared under {@code until}) by
     * its document: committed -> {@code release}; canceled, or no document (tombstoned) or another
     * nonce once no prepare of it can land -> {@code undo}; otherwise nothing. True if it wrote.
     */
    private boolean resolveOne(Object txId, String nonce, Instant until, Supplier<Instant> now, Consumer<Object> tombstoned,
                               Supplier<Boolean> release, Supplier<Boolean> undo) {
        Document tx = store.find(txId);
        if (tx == null || !nonce.equals(tx.get(TwoRoundFields.NONCE))) {
            if (now.get().isBefore(until.plus(maxClockSkew))) {
                return false; // a prepare of it may still land: nothing can be decided yet
            }
            if (tx == null) {
                tx = tombstone(txId, nonce, until, tombstoned);
            }
        }
        if (tx != null && nonce.equals(tx.get(TwoRoundFields.NONCE))) {
            TransactionState state = LateCommit.stateOf(tx);
            if (state == TransactionState.APPLIED || state == TransactionState.DONE) {
                return release.get();
            }
            if (state != TransactionState.CANCELED) {
                return false; // pending, canceling: its owner (or whoever takes it over) finishes it
            }
            if (LateCommit.late(tx)) {
                // Committed after its deadline: canceled for everyone (some entries may be undone
                // already behind a tombstone pruned since). Repaired (matching nothing if someone
                // else did first), then undone as any canceled transaction's.
                store.repair(tx);
            }
        }
        // Canceled, or the id is another transaction's: no prepare of this one can come back.
        return undo.get();
    }

    private boolean exclusive(Object txId, Supplier<Participants.Result> write) {
        crashHook.reached(CrashPoint.before(Step.RESOLVE, -1), txId);
        Participants.Result result = write.get();
        crashHook.reached(CrashPoint.after(Step.RESOLVE, -1), txId);
        return result.kind() == Participants.Kind.DONE;
    }

    private boolean write(MongoCollection<Document> coll, Object docId, Object txId, String nonce,
                          com.mongodb.client.model.UpdateOneModel<Document> write) {
        crashHook.reached(CrashPoint.before(Step.RESOLVE, -1), txId);
        Participants.Result result = Entries.entryWrite(coll, docId, txId, nonce, write);
        crashHook.reached(CrashPoint.after(Step.RESOLVE, -1), txId);
        return result.kind() == Participants.Kind.DONE;
    }

    /**
     * Inserts a canceled document for {@code txId} unless one exists; returns the document stored
     * for that id afterwards (the tombstone, or the owner's document if its insert came first).
     */
    private Document tombstone(Object txId, String nonce, Instant until, Consumer<Object> tombstoned) {
        crashHook.reached(CrashPoint.before(Step.TOMBSTONE, -1), txId);
        try {
            UpdateResult written = store.collection().updateOne(new Document(Fields.ID, txId).append(TwoRoundFields.INSERTED_AT, new Document("$exists", false))
                            .append(Fields.STATE, new Document("$exists", false)),
                    new Document("$setOnInsert", new Document(Fields.STATE, TransactionState.CANCELED.stored())
                            .append(TOMBSTONE, true).append(TwoRoundFields.PROTOCOL, TwoRoundFields.RULES)
                            .append(TwoRoundFields.NONCE, nonce).append(Fields.CODE, ReasonCode.TIMED_OUT.name())
                            .append(Fields.REASON, "abandoned: no transaction document before its deadline " + until))
                            .append("$currentDate", new Document(Fields.LAST_MODIFIED, true).append(TwoRoundFields.INSERTED_AT, true)),
                    new UpdateOptions().upsert(true));
            if (written.getUpsertedId() != null) {
                tombstoned.accept(txId);
            }
        } catch (MongoServerException e) {
            if (ErrorCategory.fromErrorCode(e.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
        }
        crashHook.reached(CrashPoint.after(Step.TOMBSTONE, -1), txId);
        return store.find(txId);
    }
}
