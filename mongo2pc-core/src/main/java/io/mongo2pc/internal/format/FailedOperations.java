package io.mongo2pc.internal.format;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionOutcome.FailedOperation;
import org.bson.Document;

/**
 * The refused operation of a canceled transaction as stored beside its {@code reason} and
 * {@code code}: {@code failedOp: {index, target, db, coll, id}}, so that any process that reads the
 * transaction can say which operation failed. Stateless.
 * Public for the state, tworound and recovery packages and the API (io.mongo2pc), as are the members they use.
 */
public final class FailedOperations {
    private FailedOperations() { }

    /** The stored form of {@code failed}. */
    public static Document stored(FailedOperation failed) {
        DocumentRef ref = failed.document();
        return new Document("index", failed.index()).append("target", ref.target()).append("db", ref.database())
                .append("coll", ref.collection()).append("id", ref.id());
    }

    /** The refused operation stored in {@code transaction}, or null if it names none (or one this version cannot read). */
    public static FailedOperation of(Document transaction) {
        if (!(transaction.get(Fields.FAILED_OP) instanceof Document d) || !(d.get("index") instanceof Number index)
                || !(d.get("target") instanceof String target) || !(d.get("db") instanceof String db)
                || !(d.get("coll") instanceof String coll) || !d.containsKey("id") || index.intValue() < 0) {
            return null;
        }
        return new FailedOperation(index.intValue(), new DocumentRef(target, db, coll, d.get("id")));
    }
}
