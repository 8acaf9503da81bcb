package io.mongo2pc.internal.interactive;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionBody;
import io.mongo2pc.TransactionConflictException;
import io.mongo2pc.TransactionOptions;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionResult;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Runs interactive transactions ({@code TransactionManager.transact}, docs/INTERACTIVE.md): the body
 * in attempts, each committed or undone, a conflict followed by a backoff and a pessimistic attempt,
 * until one commits or the timeout passes; a caller's id answered by its first run. Thread-safe: one
 * instance serves every thread, each running its own transactions.
 * Public for the API (io.mongo2pc), as are the members they use.
 */
public final class Interactive {
    /** How many attempts a body that wrote nothing runs optimistically before its attempts take what they read. */
    private static final int READ_ONLY_OPTIMISTIC_ATTEMPTS = 5;

    private final TwoRoundAccess access;
    /** True once the manager was closed: it starts nothing more. */
    private final BooleanSupplier closed;
    private final Results results;

    public Interactive(TwoRoundAccess access, BooleanSupplier closed) {
        this.access = access;
        this.closed = closed;
        this.results = new Results(access);
    }

    public <T> TransactionResult<T> transact(TransactionOptions options, TransactionBody<T> body) {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException("this transaction manager is closed (" + access.settings().owner() + ")");
        }
        if (!access.settings().twoRoundCommit()) {
            throw new IllegalStateException("transact needs the two-round commit; this manager runs every transaction by the"
                    + " tutorial's rules (twoRoundCommit(false))");
        }
        Object id = options.id().orElseGet(access::newId);
        TwoRoundAccess.checkId(id);
        if (options.id().isPresent()) {
            Optional<Document> first = access.transaction(id);
            if (first.isPresent()) {
                return results.ofFirstRun(first.get());
            }
        }
        java.time.Instant since = null; // the first attempt's time: the transaction's priority in every attempt
        Waits waits = new Waits(access.settings().clock(), options.timeout(), id);
        List<String> nonces = new ArrayList<>();
        Lost last = null;
        boolean wrote = false;
        for (int number = 1; ; number++) {
            if (number > 1) {
                waits.backoff(number);
            }
            TwoRoundAccess.Attempt attempt = access.begin(id, since);
            since = attempt.priority().since();
            nonces.add(attempt.nonce());
            // After a conflict the body takes what it reads, unless it wrote nothing: a read-only attempt
            // holds nothing, and runs optimistically again a few times before it takes what it reads too.
            boolean pessimistic = number > 1 && (wrote || number > READ_ONLY_OPTIMISTIC_ATTEMPTS);
            AttemptContext ctx = new AttemptContext(access, attempt, number, pessimistic, waits);
            AttemptCommit commit = new AttemptCommit(access, ctx);
            T value = null;
            try {
                value = run(body, ctx);
                AttemptCommit.Result result = commit.commit(results.fields(id, number, value, ctx));
                switch (result.end()) {
                    case OTHER -> {
                        Document other = result.other();
                        if (other != null && results.ownTombstone(other, nonces)) {
                            // A resolver met a write of one of our failed attempts: its tombstone stops nothing of ours.
                            access.removeOwnTombstone(id, other.getString("nonce"));
                            throw new Lost(ConflictKind.EXPIRED, null, null, "a tombstone of an earlier attempt held the id");
                        }
                        return results.ofFirstRun(other != null ? other : access.transaction(id).orElseThrow(() ->
                                new InvalidTransactionException("transaction " + id + ": its id was taken and is gone again", id)));
                    }
                    default -> {
                        access.settings().metrics().interactiveAttempts(number);
                        return new TransactionResult<>(value, result.outcome(), number);
                    }
                }
            } catch (Lost lost) {
                last = lost;
                wrote |= ctx.wrote();
            } catch (AttemptCommit.Refused refused) {
                // As a body's exception: the refusal counts only if what the body read still holds.
                Lost stale = commit.staleRead(refused);
                if (stale == null) {
                    commit.undo();
                    access.settings().metrics().interactiveAttempts(number);
                    return new TransactionResult<>(value, refused.outcome(id), number);
                }
                last = stale;
                wrote |= ctx.wrote();
            } catch (BodyFailed failed) {
                // The body's exception counts only if what the body read still holds: one decided on a
                // read that a commit since made stale (a torn view) is a conflict, and the body runs again.
                Lost stale = commit.staleRead(failed.getCause());
                if (stale == null) {
                    commit.undo(); // its takes (if any) given back, nothing written
                    access.settings().metrics().interactiveAttempts(number);
                    throw Interactive.<RuntimeException>sneaky(failed.getCause());
                }
                last = stale;
                wrote |= ctx.wrote();
            }
            access.settings().metrics().interactiveConflict(last.kind);
            commit.undo();
            if (waits.expired()) {
                access.settings().metrics().interactiveAttempts(number);
                throw new TransactionConflictException("transaction " + id + " lost a conflict in each of its " + number
                        + " attempts within " + options.timeout().toMillis() + "ms, last: " + last.getMessage(), id, number,
                        last.kind, last.document, last.heldBy);
            }
        }
    }

    /**
     * Runs the body on {@code ctx}. A conflict the context met ends the attempt whatever the body did
     * with it ({@link Lost}); anything else the body throws is the body's ({@link BodyFailed}).
     */
    private static <T> T run(TransactionBody<T> body, AttemptContext ctx) {
        try {
            T value = body.run(ctx);
            if (ctx.lost() != null) {
                throw ctx.lost(); // the body caught the conflict and returned: the attempt is over all the same
            }
            return value;
        } catch (Lost lost) {
            throw lost;
        } catch (Throwable t) {
            if (ctx.lost() != null) {
                throw ctx.lost();
            }
            if (ctx.failure() != null) {
                throw ctx.failure(); // the protocol's own failure (a crash point, the database): not the body's
            }
            throw new BodyFailed(t);
        } finally {
            ctx.close();
        }
    }

    /** An exception of the body, carried out of the attempt to reach the caller as thrown. */
    private static final class BodyFailed extends RuntimeException {
        BodyFailed(Throwable cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    /** Throws a checked exception without declaring it: the body's exception reaches the caller as it was thrown. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
