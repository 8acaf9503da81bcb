package io.mongo2pc.model;

import java.util.List;
import java.util.function.Supplier;

/**
 * A finite transition system that {@link ModelChecker} explores: the protocol as coded today
 * ({@link ProtocolModel}) and the two-round-trip commit ({@link TwoRoundModel}).
 *
 * @param <S> a state; {@link #key} must be injective on the states the model treats as different
 */
interface Model<S> {

    /** A labelled transition; the label is only built when a trace is printed. */
    record Step<S>(Supplier<String> label, S next) {
        String action() {
            return label.get();
        }
    }

    List<S> initialStates();

    List<Step<S>> successors(S s);

    /** Compact and injective: the visited set's key. */
    String key(S s);

    /** Null if {@code s} satisfies every invariant, else what is violated. */
    String violation(S s);

    /** Null if the step from {@code from} to {@code to} is allowed, else what it breaks. */
    String transitionViolation(S from, S to);

    /** A finished system: nothing left to do, every transaction terminal (the liveness target). */
    boolean finished(S s);
}
