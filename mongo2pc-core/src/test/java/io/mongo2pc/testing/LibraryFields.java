package io.mongo2pc.testing;

/**
 * The fields mongo2pc keeps on participant documents, as tests look for what a finished transaction
 * must not leave behind: a lock ({@code _m2pc}) or an entry ({@code _m2pc_<id>}). The version
 * ({@code _m2pc_v}, which counts the document's commits) stays by design.
 */
public final class LibraryFields {
    public static final String VERSION = "_m2pc_v";

    private LibraryFields() { }

    /** True for a lock or an entry: what no finished transaction leaves. */
    public static boolean leftover(String field) {
        return field.startsWith("_m2pc") && !field.equals(VERSION);
    }

    /** True for a two-round entry ({@code _m2pc_<id>}). */
    public static boolean entry(String field) {
        return field.startsWith("_m2pc_") && !field.equals(VERSION);
    }
}
