package io.mongo2pc.internal;

import org.bson.Document;

/**
 * The two-round commit's fields on a transaction document (docs/TWO-ROUND.md): the rules it
 * follows ({@code protocol: 2}), its nonce, its commit deadline and when its insert landed; and
 * whether a stored transaction follows those rules. Stateless.
 */
final class TwoRoundFields {
    static final String PROTOCOL = "protocol";
    static final int RULES = 2;
    static final String NONCE = "nonce";
    static final String UNTIL = "until";
    static final String INSERTED_AT = "insertedAt";

    /** True if {@code transaction} follows the two-round rules ({@code protocol: 2}). */
    static boolean follows(Document transaction) {
        return transaction != null && transaction.get(PROTOCOL) instanceof Number n && n.intValue() == RULES;
    }

    private TwoRoundFields() { }
}
