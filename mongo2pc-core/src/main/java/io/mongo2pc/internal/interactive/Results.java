package io.mongo2pc.internal.interactive;

import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionResult;
import io.mongo2pc.TransactionState;
import org.bson.BsonDocumentReader;
import org.bson.Document;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.ObjectId;

import java.time.Duration;
import java.util.Date;
import java.util.List;

/**
 * What an interactive transaction's document stores beside the commit's fields ({@code interactive},
 * {@code attempts}, its body's value as {@code result} with {@code resultType}), and the answer to a
 * caller's id run again: the first run's outcome, attempts and value. A value the default target's
 * codec registry cannot store is left out (a second run then returns null). Thread-safe.
 */
final class Results {
    static final String INTERACTIVE = "interactive";
    static final String ATTEMPTS = "attempts";
    static final String RESULT = "result";
    static final String RESULT_TYPE = "resultType";

    private final TwoRoundAccess access;

    Results(TwoRoundAccess access) {
        this.access = access;
    }

    private CodecRegistry registry() {
        return access.codecRegistry();
    }

    /** The fields of attempt {@code number}'s transaction document with the body's {@code value}. */
    Document fields(Object id, int number, Object value, AttemptContext ctx) {
        Document fields = new Document(INTERACTIVE, true).append(ATTEMPTS, number);
        if (value == null) {
            return fields;
        }
        if (value instanceof String || value instanceof Boolean || value instanceof Integer || value instanceof Long
                || value instanceof Double || value instanceof Date || value instanceof ObjectId) {
            return fields.append(RESULT, value).append(RESULT_TYPE, value.getClass().getName());
        }
        try {
            // Encoded now, through the registry as the driver would (a POJO, a record, a list): what cannot be is left out.
            Document wrapped = new DocumentCodec(registry()).decode(new BsonDocumentReader(
                    new Document(RESULT, value).toBsonDocument(Document.class, registry())), DecoderContext.builder().build());
            return fields.append(RESULT, wrapped.get(RESULT)).append(RESULT_TYPE, value.getClass().getName());
        } catch (RuntimeException e) {
            return fields; // not storable: a second run of the id returns no value
        }
    }

    /** The result of the transaction whose document is {@code first}: its outcome once decided, its attempts and stored value. */
    <T> TransactionResult<T> ofFirstRun(Document first) {
        Object id = first.get("_id");
        if (!Boolean.TRUE.equals(first.get(INTERACTIVE)) && !Boolean.TRUE.equals(first.get("tombstone"))) {
            throw new InvalidTransactionException("transaction id " + id + " is taken by a transaction that is not interactive", id);
        }
        Duration wait = access.settings().lease().plus(access.settings().retryTimeout());
        TransactionOutcome outcome = access.await(id, wait)
                .orElse(new TransactionOutcome(id, TransactionState.CANCELED, "its document is gone (pruned)", null));
        int attempts = first.get(ATTEMPTS) instanceof Number n ? n.intValue() : 0;
        return new TransactionResult<>(value(first), outcome, attempts);
    }

    @SuppressWarnings("unchecked")
    private <T> T value(Document first) {
        Object stored = first.get(RESULT);
        String type = first.getString(RESULT_TYPE);
        if (stored == null || type == null) {
            return null;
        }
        if (!(stored instanceof Document doc) || type.equals(Document.class.getName()) || type.startsWith("java.")) {
            return (T) stored;
        }
        try {
            Class<?> cls = Class.forName(type, false, Thread.currentThread().getContextClassLoader());
            return (T) Codecs.fromDocument(doc, cls, registry(), "the stored value of transaction " + first.get("_id"));
        } catch (ClassNotFoundException | InvalidTransactionException e) {
            return null;
        }
    }

    /** True if {@code other} is a resolver's tombstone for one of this transaction's own earlier attempts ({@code nonces}). */
    boolean ownTombstone(Document other, List<String> nonces) {
        return Boolean.TRUE.equals(other.get("tombstone")) && nonces.contains(other.getString("nonce"));
    }
}
