package io.mongo2pc.internal.admin;

import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.TransactionView;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.state.LateCommit;
import io.mongo2pc.internal.state.StoredOperations;
import io.mongo2pc.internal.state.TransactionStore;
import org.bson.Document;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.function.Function;

/**
 * Typed reads of stored transaction documents: a {@link TransactionView} (their operations: {@link StoredOperations}).
 * Public for the recovery package, as are the members they use.
 */
public final class StoredTransactions {
    private StoredTransactions() { }

    /** The view of a stored document; operations mongo2pc cannot read are shown as none (the document says what it is). */
    public static TransactionView view(Document doc, Function<Document, List<Operation>> operationsOf) {
        List<Operation> ops;
        try {
            ops = operationsOf.apply(doc);
        } catch (RuntimeException e) {
            ops = List.of();
        }
        Long leaseMs = TransactionStore.leaseOf(doc);
        Date modified = doc.get(Fields.LAST_MODIFIED) instanceof Date d ? d : null;
        // By the lateness rule: a commit written after its deadline shows as canceled, TIMED_OUT.
        boolean late = LateCommit.late(doc);
        return new TransactionView(doc.get(Fields.ID), LateCommit.counted(doc).orElse(null),
                text(doc, Fields.APPLICATION), text(doc, Fields.OWNER), TransactionStore.epochOf(doc),
                leaseMs == null ? null : Duration.ofMillis(leaseMs), modified == null ? null : modified.toInstant(), ops,
                late ? LateCommit.REASON : text(doc, Fields.REASON),
                late ? ReasonCode.TIMED_OUT : ReasonCode.parse(doc.get(Fields.CODE)).orElse(null), doc, late);
    }

    private static String text(Document doc, String field) {
        return doc.get(field) instanceof String s ? s : null;
    }
}
