package io.mongo2pc;

import org.bson.Document;
import org.bson.conversions.Bson;

import java.util.List;
import java.util.Optional;

/**
 * What the body of an interactive transaction reads and writes through, one attempt's view: a
 * document as of the last committed transaction, with this attempt's own earlier writes applied
 * (read your writes; after {@link #delete}, empty). Writes are kept until the body returns: several
 * writes to one document become one operation, written when the attempt commits. Documents are
 * reached by {@link DocumentRef} (any target, database and collection the manager knows). Numbers
 * read come in one type per scale, as {@link TransactionManager#readCommitted} returns them; typed
 * reads and writes go through the target client's {@code CodecRegistry}. Bad input (an unknown
 * target, an operator mongo2pc cannot apply, a reserved field) throws
 * {@link InvalidTransactionException} at once and changes nothing. Not thread-safe: use it from the
 * body's thread, and not after the body returned.
 */
public interface TransactionContext {

    /** The document, as of the last committed transaction plus this attempt's writes; empty if it does not exist in that view. */
    Optional<Document> get(DocumentRef document);

    /**
     * Several documents, each as {@link #get(DocumentRef)} returns it, read together: the ones this
     * transaction has not read yet in one request per collection (a transfer's two accounts in one
     * round trip). In the order of {@code documents}.
     */
    List<Optional<Document>> getAll(List<DocumentRef> documents);

    /** {@link #get(DocumentRef)} decoded as {@code type} by the target client's codec registry (POJOs, records). */
    <T> Optional<T> get(DocumentRef document, Class<T> type);

    /**
     * Inserts {@code content} (a {@link Document}, or an object the codec registry encodes) under the
     * reference's id. False, and nothing changes, if this transaction sees the document existing.
     */
    boolean insert(DocumentRef document, Object content);

    /**
     * Changes the document with update operators ({@code $set}, {@code $unset}, {@code $inc},
     * {@code $mul}, {@code $min}, {@code $max}, {@code $rename}, {@code $push} and {@code $addToSet}
     * with or without {@code $each}, {@code $pop}, {@code $pull} of values or of documents by plain
     * fields, {@code $pullAll}). False, and nothing changes, if this transaction sees no such document.
     */
    boolean update(DocumentRef document, Bson update);

    /** Replaces the document's content (its {@code _id} stays). False if this transaction sees no such document. */
    boolean replace(DocumentRef document, Object content);

    /** Deletes the document. False if this transaction sees no such document. */
    boolean delete(DocumentRef document);

    /** The transaction's id: the caller's, or one the manager made; the same in every attempt. */
    Object transactionId();

    /** Which attempt this is: 1 for the first run of the body, 2 after one conflict, ... */
    int attempt();
}
