package io.mongo2pc.internal.interactive;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.internal.format.CommittedImage;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Attempt;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Kind;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Prepared;
import io.mongo2pc.internal.interactive.TwoRoundAccess.Reading;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The commit of an attempt whose body returned (docs/INTERACTIVE.md, "Committing"): each document
 * the body changed becomes one operation, all written at once (round 1: the one-write take of an
 * update or delete checked against the version read, the insert, or for a pessimistic attempt the
 * change under its lock); then, once every write is in effect, the documents only read are checked;
 * then the commit insert. Keeps what it put in effect, so that a lost attempt is undone by its
 * nonce. Not thread-safe: one attempt's.
 */
final class AttemptCommit {
    /** What the commit came to. */
    enum End { COMMITTED, READ_ONLY, REFUSED, OTHER }

    record Result(End end, TransactionOutcome outcome, Document other) { }

    private static final AtomicInteger THREADS = new AtomicInteger();
    /** Sends the writes of round 1 that the calling thread does not send itself. Daemon threads, idle ones end. */
    private static final ExecutorService SENDERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "mongo2pc-interactive-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final TwoRoundAccess access;
    private final AttemptContext ctx;
    private final Attempt attempt;
    /** The writes this attempt may have put in effect (answered in effect, or in doubt), for its undo. */
    private final List<Operation> inEffect = new ArrayList<>();
    private boolean inDoubt;

    AttemptCommit(TwoRoundAccess access, AttemptContext ctx) {
        this.access = access;
        this.ctx = ctx;
        this.attempt = ctx.handle();
    }

    /** The commit; throws {@link Lost} on a conflict (then {@link #undo} takes back what is in effect). */
    Result commit(Document fields) {
        List<Entry> changed = new ArrayList<>();
        List<Entry> checked = new ArrayList<>();
        List<Entry> lockedOnly = new ArrayList<>();
        for (Entry e : ctx.entries()) {
            if (e.changed()) {
                changed.add(e);
            } else if (e.taken != null) {
                lockedOnly.add(e);
            } else {
                checked.add(e);
            }
        }
        if (changed.size() > access.settings().maxOperations()) {
            throw new InvalidTransactionException("a transaction may write at most " + access.settings().maxOperations()
                    + " documents (maxOperations), this one wrote " + changed.size(), attempt.id());
        }
        List<Operation> ops = new ArrayList<>(changed.size());
        changed.forEach(e -> ops.add(operation(e)));
        for (Entry e : changed) {
            access.register(attempt.id(), e.ref);
        }
        roundOne(changed, ops);
        check(checked, changed.isEmpty());
        // Every write is taken and every read checked (or taken): the attempt is serialized here. What
        // it took only to read need not stay taken until the commit.
        lockedOnly.forEach(e -> access.unlock(attempt, e.ref));
        if (changed.isEmpty()) {
            return new Result(End.READ_ONLY, new TransactionOutcome(attempt.id(), TransactionState.DONE, null), null);
        }
        TwoRoundAccess.Committed committed = access.commit(attempt, ops, fields);
        inEffect.clear(); // committed, or undone by the commit's own path
        return switch (committed.kind()) {
            case COMMITTED -> new Result(End.COMMITTED, committed.outcome(), null);
            case LATE -> throw new Lost(ConflictKind.EXPIRED, null, null, "the commit of attempt " + ctx.attempt() + " came after its deadline "
                    + attempt.until());
            case OTHER -> new Result(End.OTHER, null, committed.other());
        };
    }

    /** The operation a changed document becomes (as stored in the transaction document, without the library's fields). */
    private static Operation operation(Entry e) {
        if (e.current == null) {
            return Operation.delete(e.ref, null);
        }
        Document content = new Document(e.current);
        content.remove(Fields.ID);
        content.remove(Fields.MARKERS);
        return e.read.exists() ? Operation.update(e.ref, content, null) : Operation.insert(e.ref, content);
    }

    /** Round 1: every write at once; each must be in effect, else the attempt is lost (or refused). */
    private void roundOne(List<Entry> changed, List<Operation> ops) {
        List<CompletableFuture<Prepared>> answers = new ArrayList<>(changed.size());
        if (oneRequest(changed)) {
            // The takes of one collection: one request from this thread, no hand-off to a sender.
            try {
                for (Prepared p : access.takeAll(attempt, changed)) {
                    answers.add(CompletableFuture.completedFuture(p));
                }
            } catch (RuntimeException ex) {
                answers.clear();
                changed.forEach(e -> answers.add(CompletableFuture.failedFuture(ex)));
            }
        }
        for (int i = answers.size(); i < changed.size(); i++) {
            Entry e = changed.get(i);
            Supplier<Prepared> write = () -> write(e);
            answers.add(i == changed.size() - 1 ? inThisThread(write) : CompletableFuture.supplyAsync(() -> call(write), SENDERS));
        }
        // Every answer is awaited, the failed ones too: what the others did is known (and undone by the
        // nonce if need be) before a failure leaves round 1, and none of them is still on its way.
        Prepared refused = null;
        Lost lost = null;
        RuntimeException failed = null;
        for (int i = 0; i < changed.size(); i++) {
            Prepared p;
            try {
                p = answers.get(i).join();
            } catch (CompletionException ex) {
                // A crash point or an error after the write may have been sent: what it did is not known.
                failed = failed != null ? failed : ex.getCause() instanceof RuntimeException r ? r : ex;
                p = new Prepared(Kind.IN_DOUBT, "failed", null);
            }
            if (p.kind() == Kind.IN_EFFECT || p.kind() == Kind.IN_DOUBT) {
                inEffect.add(undoOf(changed.get(i), ops.get(i)));
                inDoubt |= p.kind() == Kind.IN_DOUBT;
            }
            if (p.kind() == Kind.REFUSED) {
                refused = refused != null ? refused : p;
            } else if (p.kind() != Kind.IN_EFFECT && lost == null) {
                lost = new Lost(AttemptContext.conflictOf(p.kind()), changed.get(i).ref, p.heldBy(), p.reason());
            }
        }
        if (failed != null) {
            throw failed;
        }
        // A conflict first: a refusal of a write the body decided on a stale read is no answer (the body runs again).
        if (lost != null) {
            throw lost;
        }
        if (refused != null) {
            throw new Refused(refused.reason());
        }
    }

    /** True if every write of {@code changed} is a take of a document as read, all in one collection, more than one. */
    private static boolean oneRequest(List<Entry> changed) {
        if (changed.size() < 2) {
            return false;
        }
        DocumentRef first = changed.get(0).ref;
        for (Entry e : changed) {
            if (e.taken != null || !e.read.exists() || !e.ref.target().equals(first.target())
                    || !e.ref.database().equals(first.database()) || !e.ref.collection().equals(first.collection())) {
                return false;
            }
        }
        return true;
    }

    private static Prepared call(Supplier<Prepared> write) {
        return write.get();
    }

    /** The last write, sent by the caller's thread; its failure is an answer, as a sender thread's is. */
    private static CompletableFuture<Prepared> inThisThread(Supplier<Prepared> write) {
        try {
            return CompletableFuture.completedFuture(call(write));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The write of a changed document: one take (optimistic), or the change of what it took (pessimistic). */
    private Prepared write(Entry e) {
        if (e.taken != null) {
            return e.current == null ? access.markDelete(attempt, e.index, e.ref) : access.change(attempt, e.index, e.ref, e.taken, e.current);
        }
        if (!e.read.exists()) {
            Document content = new Document(e.current);
            content.remove(Fields.ID);
            return access.insert(attempt, e.index, e.ref, content);
        }
        return e.current == null ? access.takeForDelete(attempt, e.index, e.ref, e.read, e.overLock)
                : access.takeAndChange(attempt, e.index, e.ref, e.read, e.overLock, e.current);
    }

    /** What undoes a write of {@code e}: an insert deletes its document, anything else restores or unlocks by its lock. */
    private static Operation undoOf(Entry e, Operation op) {
        return op instanceof Operation.Insert ? op : Operation.delete(e.ref, null);
    }

    /**
     * The check of the documents only read, after every write is taken: each as of the last
     * committed transaction must have the committed version it was read with and, if the attempt
     * writes anything, no lock of another transaction that has not committed.
     */
    private void check(List<Entry> checked, boolean readOnly) {
        if (checked.isEmpty()) {
            return;
        }
        List<DocumentRef> refs = new ArrayList<>(checked.size());
        checked.forEach(e -> refs.add(e.ref));
        List<Reading> now = access.readAll(attempt.id(), refs);
        for (int i = 0; i < checked.size(); i++) {
            Entry e = checked.get(i);
            CommittedImage image = now.get(i).image();
            // A committed transaction's lock holds nothing back: its change is counted in the version. (After
            // readAll's hundredth changed re-read its state may be newer than the document read; the lock passes
            // then too, safely: no transaction that can commit has its lock apart from its change except a
            // pessimistic one, which took what it read.)
            Document lock = now.get(i).committedLock() != null ? null : now.get(i).lock();
            if (!image.sameVersion(e.read)) {
                throw new Lost(ConflictKind.CHANGED, e.ref, null, e.ref + " was changed by a transaction that committed since it was read"
                        + " (version " + e.read.version() + ", now " + image.version() + ")");
            }
            if (!readOnly && lock != null) {
                throw new Lost(ConflictKind.HELD, e.ref, lock.get("tx"), e.ref + " is taken by transaction " + lock.get("tx"));
            }
        }
    }

    /**
     * After the body threw {@code thrown}: the conflict if a document it read (and did not take) was
     * changed by a transaction that committed since, else null. A database error while checking leaves
     * the body's exception as the answer, the error attached to it.
     */
    Lost staleRead(Throwable thrown) {
        List<Entry> read = new ArrayList<>();
        for (Entry e : ctx.entries()) {
            if (e.taken == null) {
                read.add(e);
            }
        }
        try {
            check(read, true);
            return null;
        } catch (Lost lost) {
            return lost;
        } catch (RuntimeException e) {
            thrown.addSuppressed(e);
            return null;
        }
    }

    /**
     * Takes back what this attempt put in effect, by its nonce: its writes (a write in doubt waited
     * out first, so that no copy of it lands after the undo) and its pessimistic locks.
     */
    void undo() {
        List<Operation> undo = new ArrayList<>(inEffect);
        for (Entry e : ctx.entries()) {
            if (e.taken != null) {
                undo.add(Operation.delete(e.ref, null));
            }
        }
        if (ctx.draining() != null) {
            undo.add(Operation.delete(ctx.draining(), null));
        }
        if (undo.isEmpty()) {
            return;
        }
        if (inDoubt) {
            access.awaitPassed(attempt);
        }
        access.undo(attempt, dedupe(undo));
        inEffect.clear();
    }

    private static List<Operation> dedupe(List<Operation> ops) {
        List<Operation> unique = new ArrayList<>();
        List<DocumentRef> seen = new ArrayList<>();
        for (Operation op : ops) {
            DocumentRef ref = op.document().withComparableId();
            if (!seen.contains(ref)) {
                seen.add(ref);
                unique.add(op);
            }
        }
        return unique;
    }

    /** The database refused a write for good (a unique index, a validator): the transaction ends canceled. */
    static final class Refused extends RuntimeException {
        Refused(String reason) {
            super(reason, null, false, false);
        }

        TransactionOutcome outcome(Object id) {
            return new TransactionOutcome(id, TransactionState.CANCELED, getMessage(), ReasonCode.GUARD_FAILED);
        }
    }
}
