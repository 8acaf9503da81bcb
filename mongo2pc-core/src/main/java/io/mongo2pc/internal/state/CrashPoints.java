package io.mongo2pc.internal.state;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint.Phase;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.spi.CrashPoint;

/**
 * Calls the configured {@link CrashHook} around the protocol's writes. A crash point AFTER a write
 * runs inside the retried step ({@link #after(Object, Step, int, Object)}): a transient error
 * thrown there is a write applied whose acknowledgement was lost, and the retry must recognise
 * it. Thread-safe if the hook is.
 * Public for the tutorial, tworound and recovery packages and Engine, as are the members they use.
 */
public final class CrashPoints {
    private final CrashHook hook;

    public CrashPoints(CrashHook hook) {
        this.hook = hook;
    }

    public void before(Step step, int participant, Object id) {
        hook.reached(CrashPoint.before(step, participant), id);
    }

    /** The AFTER crash point of a write, passing its result through. */
    public <T> T after(T result, Step step, int participant, Object id) {
        hook.reached(CrashPoint.after(step, participant), id);
        return result;
    }

    /** The crash point of {@code step} in {@code phase} for every operation of a transaction of {@code size}. */
    public void each(Step step, Phase phase, int size, Object id) {
        for (int i = 0; i < size; i++) {
            hook.reached(phase == Phase.BEFORE ? CrashPoint.before(step, i) : CrashPoint.after(step, i), id);
        }
    }

    /** The crash point of {@code t}'s write in {@code phase}, if it has one. */
    public void reach(Transition t, Phase phase, Object id) {
        CrashPoint point = t.crashPoint(phase);
        if (point != null) {
            hook.reached(point, id);
        }
    }

    /** The AFTER crash point of {@code t}'s write, passing its result through. */
    public <T> T reached(T result, Transition t, Object id) {
        reach(t, Phase.AFTER, id);
        return result;
    }
}
