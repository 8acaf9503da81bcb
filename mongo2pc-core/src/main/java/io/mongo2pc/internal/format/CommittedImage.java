package io.mongo2pc.internal.format;

import org.bson.Document;

/**
 * A document as of the last committed transaction, as {@code readCommitted} computes it but with
 * its numbers in their stored types, and its committed version ({@link Versions}): the version the
 * document will have once everything committed on it is released. {@code content} is null when no
 * committed document exists; otherwise it has no field of the library ({@code _m2pc},
 * {@code _m2pc_<id>}, {@code _m2pc_v}), and {@code pendingTransactions} reads as empty if the
 * document has the array. Immutable by convention.
 * Public for the reads and interactive packages, as are the members they use.
 */
public record CommittedImage(Document content, long version) {
    public static final CommittedImage NONE = new CommittedImage(null, 0);

    public boolean exists() {
        return content != null;
    }

    /** True if {@code other} is the same committed state: both missing, or both there with one version. */
    public boolean sameVersion(CommittedImage other) {
        return exists() == other.exists() && (!exists() || version == other.version);
    }
}
