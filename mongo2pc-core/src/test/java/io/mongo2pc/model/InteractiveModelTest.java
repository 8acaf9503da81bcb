package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;

import static io.mongo2pc.model.InteractiveProgram.COUNTER_A;
import static io.mongo2pc.model.InteractiveProgram.DOCTOR_A;
import static io.mongo2pc.model.InteractiveProgram.DOCTOR_B;
import static io.mongo2pc.model.InteractiveProgram.READER;
import static io.mongo2pc.model.InteractiveProgram.TRANSFER_AB;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of interactive transactions (docs/INTERACTIVE.md, docs/MODEL.md): two
 * interactive processes, each with an optimistic attempt and a pessimistic one after a conflict,
 * mixed with a fixed-operation transfer on the same documents, with a lost answer whose write lands
 * late, crashes and deadlines passing at any time. Every finished history must be serializable.
 */
class InteractiveModelTest {

    /** A configuration: the bodies, whether F runs, A and B, attempts per process, faults. */
    record Setup(String name, InteractiveProgram[] programs, boolean withFixed, int[] initial, int delays, int crashes) {
        /** Two read-modify-write counters on A, and F = B -> A crediting A: lost updates, F's version. */
        static final Setup COUNTERS = new Setup("two counters on A and F = B -> A", new InteractiveProgram[] {COUNTER_A, COUNTER_A},
                true, new int[] {0, 1}, 1, 0);
        /** The same with a crash instead of a lost answer. */
        static final Setup COUNTERS_CRASH = new Setup("two counters on A and F, a crash", new InteractiveProgram[] {COUNTER_A, COUNTER_A},
                true, new int[] {0, 1}, 0, 1);
        /** Two doctors on call, each takes itself off if both are on: write skew. */
        static final Setup DOCTORS = new Setup("two doctors", new InteractiveProgram[] {DOCTOR_A, DOCTOR_B}, false, new int[] {1, 1}, 1, 0);
        /** A read-then-write transfer A -> B without a guard, a read-only reader of both, and F = B -> A. */
        static final Setup TRANSFER_AND_READER = new Setup("transfer A -> B, a reader, F = B -> A",
                new InteractiveProgram[] {TRANSFER_AB, READER}, true, new int[] {1, 1}, 1, 0);

        InteractiveModel model(Set<InteractiveBug> bugs) {
            return new InteractiveModel(bugs, programs, withFixed, initial, 2, delays, crashes);
        }

        @Override
        public String toString() {
            return name + " (A,B=" + Arrays.toString(initial) + ", lost answers=" + delays + " crashes=" + crashes + ")";
        }
    }

    private static ModelChecker.Outcome check(Set<InteractiveBug> bugs, Setup setup) {
        long start = System.nanoTime();
        InteractiveModel model = setup.model(bugs);
        ModelChecker.Outcome outcome = new ModelChecker<>(model, model.situations()).run();
        System.out.println("interactive model " + (bugs.isEmpty() ? "as designed" : bugs) + ", " + setup + ": " + outcome.report()
                + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        return outcome;
    }

    @Test
    void interactive_mixedWithAFixedTransfer_lostAnswersCrashesAndDeadlines_everyFinishedHistoryIsSerializable() {
        for (Setup setup : new Setup[] {Setup.COUNTERS, Setup.COUNTERS_CRASH, Setup.DOCTORS, Setup.TRANSFER_AND_READER}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(InteractiveBug.class), setup);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            if (setup != Setup.COUNTERS_CRASH) {
                assertThat(outcome.reached()).as("situations the search must reach in " + setup).allSatisfy((situation, states) ->
                        assertThat(states).as(situation).isPositive());
            }
        }
    }

    static Stream<InteractiveBug> harmfulBugs() {
        return Arrays.stream(InteractiveBug.values()).filter(b -> b.harmful);
    }

    static Stream<InteractiveBug> harmlessMutations() {
        return Arrays.stream(InteractiveBug.values()).filter(b -> !b.harmful);
    }

    private static Setup setupFor(InteractiveBug bug) {
        return switch (bug) {
            case READ_NOT_VALIDATED, VALIDATION_BEFORE_LOCKS, VALIDATION_IGNORES_LOCKS, TAKE_OVER_HELD -> Setup.DOCTORS;
            case TAKE_IGNORES_MARKERS, READ_ONLY_CHECKS_LOCKS, READ_BEFORE_DRAINED -> Setup.TRANSFER_AND_READER;
            default -> Setup.COUNTERS;
        };
    }

    @ParameterizedTest
    @MethodSource("harmfulBugs")
    void deliberateBug_isCaughtWithAShortestTrace(InteractiveBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), setupFor(bug));

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull();
        assertThat(outcome.trace()).isNotEmpty();
    }

    @ParameterizedTest
    @MethodSource("harmlessMutations")
    void mutationTheDesignDoesNotNeed_breaksNoInvariant(InteractiveBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), setupFor(bug));

        assertThat(outcome.violation()).as(outcome.report()).isNull();
    }
}
