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

    /** An id as a map key that matches as MongoDB matches ids: the numbers 1, 1L, 1.0 and Decimal128 1 alike. */
    public static Object key(Object id) {
        if (id instanceof Number n) {
            double d = n.doubleValue();
            return d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 0x1p63 ? (Object) n.longValue() : (Object) d;
        }
        return id;
    }
}
