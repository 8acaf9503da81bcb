package io.mongo2pc;

import org.bson.Document;

import java.util.List;
import java.util.Optional;

/**
 * Reads the operations of a transaction document that has no {@code ops} field of mongo2pc's own,
 * such as a transfer written as the tutorial writes it ({@code source}, {@code destination},
 * {@code value}). Registered with {@link TransactionManagerBuilder#codec}; the first codec that
 * recognises a document wins. Implementations must be stateless and thread-safe.
 */
public interface TransactionCodec {

    /**
     * The operations of {@code transaction}, or empty if this codec does not recognise it.
     *
     * @param coordinatorDatabase the database of the transactions collection the document came from
     */
    Optional<List<Operation>> operations(Document transaction, String coordinatorDatabase);

    /**
     * A filter of the transaction documents this codec reads whose operations touch a document with
     * the {@code _id} {@code documentId} (a transfer's {@code source} or {@code destination}), for
     * {@link TransactionQuery.Builder#touching}; empty if it cannot tell (the default).
     */
    default Optional<Document> touching(Object documentId) {
        return Optional.empty();
    }
}
