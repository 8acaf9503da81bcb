package io.mongo2pc.internal.format;

/**
 * Field names of the stored documents: the tutorial's own, then mongo2pc's additions.
 * Public for the wire, participants, state, admin, tutorial, tworound, reads, recovery and interactive packages and Engine, as are the members they use.
 */
public final class Fields {
    private Fields() { }

    // The tutorial's fields.
    public static final String ID = "_id";
    public static final String STATE = "state";
    public static final String LAST_MODIFIED = "lastModified";
    public static final String APPLICATION = "application";
    public static final String MARKERS = "pendingTransactions";

    // mongo2pc's fields beside them.
    public static final String OWNER = "owner";
    public static final String EPOCH = "epoch";
    public static final String OPS = "ops";
    public static final String REASON = "reason";
    /** The reason's ReasonCode, by name. */
    public static final String CODE = "code";
    /** The refused operation of a canceled transaction: {index, target, db, coll, id} (see FailedOperations). */
    public static final String FAILED_OP = "failedOp";
    public static final String LEASE_MS = "leaseMs";
    /** When the transaction was asked for (run or submitted), by the owner's reading of the server's clock. */
    public static final String STARTED_AT = "startedAt";
    /** When it reached its commit point: {@code $currentDate} of the commit (its insert as applied, or pending -> applied). */
    public static final String COMMITTED_AT = "committedAt";
    /** Who acted on it by hand and when ({@code [{action, by, at}]}, the last 20), written by {@code TransactionStore.note}. */
    public static final String ACTIONS = "actions";
    /** Indexes of insert operations whose request may still land late (see WritesInDoubt). */
    public static final String INSERTS_IN_DOUBT = "insertsInDoubt";

    // On a participant taken by an exclusive operation: {tx, kind, c, undo, noMarkers, until, at}.
    public static final String LOCK = "_m2pc";
    public static final String LOCK_TX = LOCK + ".tx";
    public static final String LOCK_UNDO = LOCK + ".undo";
    /** The two-round commit's nonce on a lock (absent on a tutorial-rules lock). */
    public static final String LOCK_NONCE = LOCK + ".n";
    /** True when the taken document had no marker array before: its release and undo leave none. */
    public static final String LOCK_NO_MARKERS = LOCK + ".noMarkers";
    public static final String TOKEN = "token";
}
