package io.mongo2pc.internal.format;

import io.mongo2pc.Numbers;
import org.bson.Document;
import org.bson.types.ObjectId;

import java.math.BigDecimal;

/**
 * The name of a two-round transaction's entry on a participant: {@code _m2pc_} and the
 * transaction id, {@code o<hex>} for an ObjectId, {@code s<text>} for a string ({@code %}, {@code .}
 * and {@code $} written {@code %25}, {@code %2E}, {@code %24}), {@code n<digits>} for a whole
 * number (1, 1L and 1.0 share {@code n1}, as MongoDB matches them). The one function that turns an
 * id into a field name: writers, readers and the sweep all use it. Stateless.
 * Public for the wire, participants, state, tworound, reads and interactive packages, as are the members they use.
 */
public final class EntryName {
    public static final String PREFIX = "_m2pc_";
    // The fields of an entry: {now, later, until, n, c, p} (see Entries).
    public static final String NOW = "now";
    public static final String LATER = "later";
    public static final String UNTIL = "until";
    public static final String NONCE = "n";
    public static final String COORDINATOR = "c";

    private EntryName() { }

    /** True if an entry can be named after {@code id}. */
    public static boolean supports(Object id) {
        return id instanceof ObjectId || id instanceof String || wholeNumber(id) != null;
    }

    /** The entry's field name for transaction {@code id}; throws IllegalArgumentException for another kind of id. */
    public static String of(Object id) {
        if (id instanceof ObjectId oid) {
            return PREFIX + "o" + oid.toHexString();
        }
        if (id instanceof String s) {
            return PREFIX + "s" + s.replace("%", "%25").replace(".", "%2E").replace("$", "%24").replace("\0", "%00");
        }
        BigDecimal whole = wholeNumber(id);
        if (whole != null) {
            return PREFIX + "n" + whole.toPlainString();
        }
        throw new IllegalArgumentException("a transaction id must be an ObjectId, a string or a whole number with the "
                + "two-round commit, not " + id);
    }

    /**
     * {@code filter} also requiring that {@code txId} has no two-round entry on the document: a
     * tutorial-rules write of a marker matches only its own marker, never another transaction's
     * with the same id under the two-round rules (an id no entry can be named after has none).
     */
    public static Document withoutEntry(Document filter, Object txId) {
        return supports(txId) ? filter.append(of(txId), new Document("$exists", false)) : filter;
    }

    /** True if {@code doc} carries a two-round entry of transaction {@code txId}. */
    public static boolean on(Document doc, Object txId) {
        return supports(txId) && doc.get(of(txId)) instanceof Document;
    }

    /** True for the name of an entry (a field this library adds beside a marker); the version is not one. */
    public static boolean isEntry(String field) {
        return field.startsWith(PREFIX) && !field.equals(Versions.FIELD);
    }

    private static BigDecimal wholeNumber(Object id) {
        if (!(id instanceof Number n) || !Numbers.isFinite(n)) {
            return null;
        }
        BigDecimal exact = Numbers.exact(n);
        return exact.signum() == 0 ? BigDecimal.ZERO
                : exact.stripTrailingZeros().scale() <= 0 ? exact.setScale(0) : null;
    }
}
