package io.mongo2pc;

import io.mongo2pc.internal.Validation;

import java.util.Objects;

/**
 * One document: its {@code _id} in a collection of a database reached through a named target
 * (a MongoClient given to {@link TransactionManagerBuilder#target}). Immutable.
 */
public record DocumentRef(String target, String database, String collection, Object id) {

    public static final String DEFAULT_TARGET = "default";

    public DocumentRef {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(collection, "collection");
    }

    /** A document reached through the {@value #DEFAULT_TARGET} target. */
    public static DocumentRef of(String database, String collection, Object id) {
        return new DocumentRef(DEFAULT_TARGET, database, collection, id);
    }

    /**
     * Refuses an id that is not a plain value (a non-empty string, an integer or an ObjectId),
     * such as a document that smuggles a query operator ({@code {"$gt": ""}}).
     *
     * @throws InvalidTransactionException naming {@code what} and the id
     */
    public static void requirePlainId(Object id, String what) {
        Validation.checkId(id, what);
    }

    @Override
    public String toString() {
        return target + "/" + database + "." + collection + "/" + io.mongo2pc.internal.Values.text(id);
    }
}
