package io.mongo2pc.embedded.internal;

/**
 * One force held back for sibling requests: while requests being handled have not yet reached the
 * disk wait (they will append records the same force can cover), a force may wait for them, for at
 * most the commit delay counted from the first time it held back. A force costs CPU whatever it
 * carries, so under load this puts several times more records into each one; alone, a request
 * forces at once.
 *
 * <p>Used by one thread at a time: a waiter of {@link Waiters#awaitDurable}, or the {@link LogWriter}.
 */
final class HoldBack {

    private final long delayNanos;
    /** When the hold ends ({@link System#nanoTime()}); 0: not holding yet. */
    private long until;

    HoldBack(long delayNanos) {
        this.delayNanos = delayNanos;
    }

    /**
     * How long the force may still wait, in nanoseconds; 0 or less: force now. Starts the hold if
     * {@code siblingsComing} and it has not started; with no delay, or no siblings, forces at once.
     */
    long nanosLeft(boolean siblingsComing) {
        if (delayNanos <= 0 || !siblingsComing) {
            return 0;
        }
        long now = System.nanoTime();
        if (until == 0) {
            until = now + delayNanos;
        }
        return until - now;
    }

    /** The force ran (or will not wait): the next one starts a hold of its own. */
    void reset() {
        until = 0;
    }
}
