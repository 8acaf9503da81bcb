package io.mongo2pc;

import org.bson.types.ObjectId;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One document: its {@code _id} in a collection of a database reached through a named target
 * (a MongoClient given to {@link TransactionManagerBuilder#target}). It knows what makes a valid
 * one ({@link #requirePlainId}, {@link #databaseNameProblem}, {@link #collectionNameProblem}),
 * checked before a transaction writes anything. Immutable.
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
     * @throws InvalidTransactionException naming {@code what} (its text) and the id
     */
    public static void requirePlainId(Object id, Object what) {
        if (id instanceof String s) {
            if (s.isEmpty()) {
                throw new InvalidTransactionException(what + ": id must not be empty");
            }
            return;
        }
        if (id instanceof Integer || id instanceof Long || id instanceof ObjectId || isWholeDouble(id)) {
            return;
        }
        throw new InvalidTransactionException(what + ": id must be a string, an integer or an ObjectId, got "
                + Values.describe(id));
    }

    /** A whole number stored as a double, as the mongo shell stores {@code _id: 1} (the tutorial's). */
    private static boolean isWholeDouble(Object id) {
        return id instanceof Double d && !d.isInfinite() && d == Math.rint(d) && Math.abs(d) <= 1L << 53;
    }

    /**
     * This reference with its id as MongoDB compares ids ({@code 1}, {@code 1L} and {@code 1.0} are
     * one document): two references to one document are equal after this.
     */
    public DocumentRef withComparableId() {
        Object comparable = comparableId(id);
        return comparable == id ? this : new DocumentRef(target, database, collection, comparable);
    }

    /** {@code id} as MongoDB compares ids: a whole number as a Long, anything else as it is. */
    public static Object comparableId(Object id) {
        if (id instanceof Integer i) {
            return Long.valueOf(i);
        }
        return isWholeDouble(id) ? Long.valueOf(((Double) id).longValue()) : id;
    }

    /** Why {@code name} cannot name a MongoDB database, or null if it can. */
    public static String databaseNameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "empty";
        }
        for (char c : new char[]{'/', '\\', '.', ' ', '"', '$', '\0'}) {
            if (name.indexOf(c) >= 0) {
                return "contains '" + (c == '\0' ? "\\0" : String.valueOf(c)) + "'";
            }
        }
        return name.getBytes(StandardCharsets.UTF_8).length > 63 ? "longer than 63 bytes" : null;
    }

    /**
     * Why {@code name} cannot name a collection a transaction may write, or null if it can
     * ({@code system.} collections belong to the server).
     */
    public static String collectionNameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "empty";
        }
        if (name.contains("$") || name.contains("\0")) {
            return "contains '$' or a NUL character";
        }
        if (name.startsWith("system.")) {
            return "system collections belong to the server";
        }
        if (name.startsWith(".") || name.endsWith(".")) {
            return "starts or ends with '.'";
        }
        return name.getBytes(StandardCharsets.UTF_8).length > 200 ? "longer than 200 bytes" : null;
    }

    @Override
    public String toString() {
        return target + "/" + database + "." + collection + "/" + Values.text(id);
    }
}
