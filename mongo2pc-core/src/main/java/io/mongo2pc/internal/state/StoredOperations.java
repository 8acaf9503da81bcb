package io.mongo2pc.internal.state;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionCodec;
import io.mongo2pc.TransactionManagerSettings;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.OperationCodec;
import io.mongo2pc.internal.wire.Targets;
import org.bson.Document;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A transaction's operations: read back from its stored document (mongo2pc's {@code ops}, or a
 * registered codec), and checked before anything is written or taken over. Thread-safe.
 * Public for the admin, recovery and interactive packages and Engine, as are the members they use.
 */
public final class StoredOperations {
    private final TransactionManagerSettings settings;
    private final Set<String> targetNames;
    private final NumberTypes numberTypes;

    public StoredOperations(TransactionManagerSettings settings, Targets targets) {
        this.settings = settings;
        this.targetNames = targets.names();
        this.numberTypes = new NumberTypes(targets);
    }

    /** The operations of a stored transaction; throws IllegalStateException if none can be read. */
    public List<Operation> of(Document transaction) {
        return of(transaction, settings.codecs(), settings.database());
    }

    /**
     * The operations of a transaction document: its {@code ops}, else what the first codec that
     * recognises it reads (e.g. a tutorial transfer). Throws {@link IllegalStateException} if none can.
     */
    public static List<Operation> of(Document transaction, List<TransactionCodec> codecs, String database) {
        List<Document> stored = transaction.getList(Fields.OPS, Document.class);
        if (stored != null) {
            return OperationCodec.decode(stored);
        }
        for (TransactionCodec codec : codecs) {
            Optional<List<Operation>> ops = codec.operations(transaction, database);
            if (ops.isPresent()) {
                return ops.get();
            }
        }
        throw new IllegalStateException("transaction " + transaction.get(Fields.ID)
                + " has no operations mongo2pc can read (no 'ops' field and no codec recognises it)");
    }

    /**
     * {@link #validate}, and no increment that would change a stored number's type or scale
     * ({@link NumberTypes}, one read per document incremented by a double or a decimal): the checks of
     * a transaction about to start, before anything is written.
     */
    public void validateNew(List<Operation> ops, int maxOperations, Object id) {
        validate(ops, maxOperations, id);
        numberTypes.check(ops, id);
    }

    /** Validation.check, and no operation on the coordinator's own documents (transactions, clock). */
    public void validate(List<Operation> ops, int maxOperations, Object id) {
        try {
            Validation.check(ops, targetNames, maxOperations);
        } catch (InvalidTransactionException e) {
            throw new InvalidTransactionException(e.getMessage(), id); // nothing written; the caller knows which call
        }
        for (int i = 0; i < ops.size(); i++) {
            DocumentRef ref = ops.get(i).document();
            if (ref.target().equals(DocumentRef.DEFAULT_TARGET) && ref.database().equals(settings.database())
                    && (ref.collection().equals(settings.transactionsCollection())
                    || ref.collection().equals(settings.transactionsCollection() + "_clock"))) {
                throw new InvalidTransactionException("operation " + i + " on " + ref + ": the collection "
                        + ref.collection() + " belongs to the transaction coordinator and cannot be changed by an operation", id);
            }
        }
    }
}
