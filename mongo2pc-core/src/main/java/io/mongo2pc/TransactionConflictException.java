package io.mongo2pc;

/**
 * An interactive transaction lost a conflict in every attempt until its timeout
 * ({@link TransactionOptions#timeout()}): nothing of it is in effect. Carries the transaction's id,
 * how many times the body ran, and the last conflict: its kind, the document and, when known, the
 * transaction that held it. Run it again later (with the same id, if it had one: nothing was stored
 * under it), or with a longer timeout.
 */
public class TransactionConflictException extends TransactionException {
    private final int attempts;
    private final ConflictKind kind;
    private final transient DocumentRef document;
    private final transient Object heldBy;

    public TransactionConflictException(String message, Object transactionId, int attempts, ConflictKind kind, DocumentRef document,
                                        Object heldBy) {
        super(message, transactionId, null);
        this.attempts = attempts;
        this.kind = kind;
        this.document = document;
        this.heldBy = heldBy;
    }

    /** How many times the body ran. */
    public int attempts() {
        return attempts;
    }

    /** Why the last attempt lost. */
    public ConflictKind conflictKind() {
        return kind;
    }

    /** The document of the last conflict, or null if it concerned no one document (the attempt's deadline). */
    public DocumentRef conflictDocument() {
        return document;
    }

    /** The transaction that held that document, or null if not known (a commit that changed it since it was read). */
    public Object conflictingTransaction() {
        return heldBy;
    }
}
