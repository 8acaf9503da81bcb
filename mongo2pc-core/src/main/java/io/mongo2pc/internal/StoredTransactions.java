package io.mongo2pc.internal;

import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionCodec;
import io.mongo2pc.TransactionState;
import io.mongo2pc.TransactionView;
import org.bson.Document;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Typed reads of stored transaction documents: their operations and a {@link TransactionView}. */
final class StoredTransactions {
    private StoredTransactions() { }

    /**
     * The operations of a transaction document: its {@code ops}, else what the first codec that
     * recognises it reads (e.g. a tutorial transfer). Throws {@link IllegalStateException} if none can.
     */
    static List<Operation> operations(Document transaction, List<TransactionCodec> codecs, String database) {
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

    /** The view of a stored document; operations mongo2pc cannot read are shown as none (the document says what it is). */
    static TransactionView view(Document doc, Function<Document, List<Operation>> operationsOf) {
        List<Operation> ops;
        try {
            ops = operationsOf.apply(doc);
        } catch (RuntimeException e) {
            ops = List.of();
        }
        Object state = doc.get(Fields.STATE);
        Long leaseMs = TransactionStore.leaseOf(doc);
        Date modified = doc.get(Fields.LAST_MODIFIED) instanceof Date d ? d : null;
        return new TransactionView(doc.get(Fields.ID), TransactionState.parse(state instanceof String s ? s : null).orElse(null),
                text(doc, Fields.APPLICATION), text(doc, Fields.OWNER), TransactionStore.epochOf(doc),
                leaseMs == null ? null : Duration.ofMillis(leaseMs), modified == null ? null : modified.toInstant(), ops,
                text(doc, Fields.REASON), ReasonCode.parse(doc.get(Fields.CODE)).orElse(null), doc);
    }

    private static String text(Document doc, String field) {
        return doc.get(field) instanceof String s ? s : null;
    }
}
