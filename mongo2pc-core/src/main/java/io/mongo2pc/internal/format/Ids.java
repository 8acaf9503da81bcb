package io.mongo2pc.internal.format;

/**
 * Ids compared as MongoDB matches them: numbers by value whatever their type (1, 1L and 1.0 are one id). Stateless.
 * Public for the wire, participants, tworound and reads packages, as are the members they use.
 */
public final class Ids {
    private Ids() { }

    /** True if {@code a} and {@code b} name the same document or transaction. */
    public static boolean sameId(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return x.longValue() == y.longValue() && x.doubleValue() == y.doubleValue();
        }
        return a != null && a.equals(b);
    }
}
