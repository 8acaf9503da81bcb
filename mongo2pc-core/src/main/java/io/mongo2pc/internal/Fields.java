package io.mongo2pc.internal;

/** Field names of the stored documents: the tutorial's own, then mongo2pc's additions. */
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
    public static final String CREATED = "created";
    /** On participants: transactions finished there by a new owner; a late write of an old owner is refused. */
    public static final String FINISHED = "finishedTransactions";
}
