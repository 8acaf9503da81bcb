package io.mongo2pc.internal.interactive;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.internal.format.CommittedImage;
import org.bson.Document;

/**
 * One document of an attempt's buffer: as read (its committed image, {@code _id} included, and
 * committed version; for a pessimistic attempt, the stored document it took), and as the body left
 * it ({@code current}: null when it does not exist in the attempt's view). Not thread-safe: one
 * attempt's.
 */
public final class Entry {
    final DocumentRef ref;
    /** The order in which the attempt first touched it (the index of its crash points). */
    final int index;
    final CommittedImage read;
    /** The stored document as a pessimistic read took it (its lock ours since), or null. */
    final Document taken;
    /** The lock of a committed update the document was read under, which the optimistic take may replace; or null. */
    final Document overLock;
    Document current;
    boolean written;

    Entry(DocumentRef ref, int index, CommittedImage read, Document taken) {
        this(ref, index, read, taken, null);
    }

    Entry(DocumentRef ref, int index, CommittedImage read, Document taken, Document overLock) {
        this.ref = ref;
        this.index = index;
        this.read = read;
        this.taken = taken;
        this.overLock = overLock;
        this.current = read.exists() ? BsonValues.copy(read.content()) : null;
    }

    /** True if the body changed it: it exists or not other than as read, or with other content. */
    boolean changed() {
        if (!written) {
            return false;
        }
        if (current == null || !read.exists()) {
            return current != null || read.exists();
        }
        return !current.equals(read.content());
    }
}
