package io.mongo2pc.spi;

/**
 * What a {@link CrashHook} throws to stop the protocol at a {@link CrashPoint} as a crash of the
 * process would: the transaction is abandoned as it is, and another process's recovery finishes
 * it once its owner's lease runs out. Not a database error, so nothing retries it. Without a
 * stack trace (it is expected). Immutable.
 */
public final class SimulatedCrash extends RuntimeException {
    private final transient CrashPoint point;
    private final transient Object transactionId;

    /** A crash at {@code point} of the transaction {@code transactionId} (null before it has an id, as at a claim). */
    public SimulatedCrash(CrashPoint point, Object transactionId) {
        super("simulated crash at " + point + " of transaction " + transactionId, null, false, false);
        this.point = point;
        this.transactionId = transactionId;
    }

    public CrashPoint point() {
        return point;
    }

    public Object transactionId() {
        return transactionId;
    }
}
