package io.mongo2pc.internal.format;

import org.bson.Document;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The version of a participant document ({@code _m2pc_v}, docs/INTERACTIVE.md): its committed value
 * counts the commits that changed the document, one each. A release of an increment and the change
 * of an update add 1 in the same write; an insert starts a new document at a random version, so one
 * deleted and inserted again never counts up from where it stood; an undo restores the before-image,
 * version included. Stateless.
 * Public for the participants, reads and interactive packages, as are the members they use.
 */
public final class Versions {
    /** The field, a 64-bit integer; absent on a document no mongo2pc commit has changed (version 0). */
    public static final String FIELD = "_m2pc_v";

    private Versions() { }

    /** The stored version of {@code doc} (0 if absent). */
    public static long of(Document doc) {
        return doc != null && doc.get(FIELD) instanceof Number n ? n.longValue() : 0L;
    }

    /** The {@code $inc} amount that counts one commit. */
    public static Document bump() {
        return new Document(FIELD, 1L);
    }

    /** A new document's first version: random in [2^32, 2^62). */
    public static long fresh() {
        return ThreadLocalRandom.current().nextLong(1L << 32, 1L << 62);
    }

    /** {@code update} (update operators) with one more commit counted: {@code $inc} of the version merged in. */
    public static Document counted(Document update) {
        Document copy = new Document();
        update.forEach((operator, fields) -> copy.append(operator, fields instanceof Document d ? new Document(d) : fields));
        ((Document) copy.computeIfAbsent("$inc", k -> new Document())).append(FIELD, 1L);
        return copy;
    }

    /** The filter condition of a document whose stored version is {@code version} (absent for 0). */
    public static Object filter(long version) {
        return version == 0 ? new Document("$exists", false) : (Object) version;
    }
}
