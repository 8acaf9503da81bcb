package io.mongo2pc.internal.format;

import org.bson.Document;

/**
 * The two-round commit's fields on a transaction document (docs/TWO-ROUND.md): the rules it
 * follows ({@code protocol: 2}), its nonce, its commit deadline and when its insert landed; and
 * whether a stored transaction follows those rules; the filter of its insert-if-absent. Stateless.
 * Public for the state, admin, tutorial, tworound, reads, recovery and interactive packages and Engine, as are the members they use.
 */
public final class TwoRoundFields {
    public static final String PROTOCOL = "protocol";
    public static final int RULES = 2;
    public static final String NONCE = "nonce";
    public static final String UNTIL = "until";
    public static final String INSERTED_AT = "insertedAt";

    /** True if {@code transaction} follows the two-round rules ({@code protocol: 2}). */
    public static boolean follows(Document transaction) {
        return transaction != null && transaction.get(PROTOCOL) instanceof Number n && n.intValue() == RULES;
    }

    /**
     * The filter of an insert-if-absent of {@code id}: every transaction document has a state (a
     * tutorial-rules one has no insertedAt), so it matches none, and an upsert with it inserts or
     * meets a duplicate key.
     */
    public static Document absent(Object id) {
        return new Document(Fields.ID, id).append(INSERTED_AT, new Document("$exists", false))
                .append(Fields.STATE, new Document("$exists", false));
    }

    private TwoRoundFields() { }
}
