package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of the protocol (see docs/MODEL.md): every interleaving of two
 * coordinators' writes, pauses of any length, lost acknowledgements and up to {@link #CRASHES}
 * crashes, for a transfer of 1 from A to B with A holding 1 (commits) or 0 (refused: cancels).
 */
class ProtocolModelTest {
    /** Crashes per run; {@code -Dmodel.crashes=2} searches a bigger space (about a minute). */
    static final int CRASHES = Integer.getInteger("model.crashes", 1);
    /** {@code -Dmodel.explicitHands=true}: every write is prepared into the hand, then sent (same verdicts, more states). */
    static final boolean EXPLICIT_HANDS = Boolean.getBoolean("model.explicitHands");

    private static ModelChecker.Outcome check(Set<Bug> bugs, int balanceA) {
        ModelChecker.Outcome outcome = new ModelChecker(new ProtocolModel(bugs, CRASHES, EXPLICIT_HANDS, balanceA, 0)).run();
        System.out.println("model " + (bugs.isEmpty() ? "correct protocol" : bugs) + ", A=" + balanceA + ", B=0: " + outcome.report());
        return outcome;
    }

    @Test
    void protocol_everyInterleavingWithPausesCrashesAndLostAcks_keepsEveryInvariantAndCanAlwaysFinish() {
        for (int balanceA : new int[] {1, 0}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(Bug.class), balanceA);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.states()).isGreaterThan(5_000);
            assertThat(outcome.finishedStates()).isPositive();
        }
    }

    static Stream<Bug> harmfulBugs() {
        return Arrays.stream(Bug.values()).filter(b -> b.harmful);
    }

    static Stream<Bug> harmlessMutations() {
        return Arrays.stream(Bug.values()).filter(b -> !b.harmful);
    }

    @ParameterizedTest
    @MethodSource("harmfulBugs")
    void deliberateBug_isCaughtWithAShortestTrace(Bug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), 1);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull();
        assertThat(outcome.trace()).isNotEmpty();
    }

    /** Defence in depth: without these guards the deadline fence alone still keeps every invariant. */
    @ParameterizedTest
    @MethodSource("harmlessMutations")
    void redundantGuardRemoved_noInvariantBreaks(Bug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), 1);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
    }
}
