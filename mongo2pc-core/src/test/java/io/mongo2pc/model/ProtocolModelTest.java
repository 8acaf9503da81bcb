package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.EnumSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of the protocol (see docs/MODEL.md): every interleaving of two
 * coordinators' writes, pauses of any length, lost acknowledgements and up to {@link #CRASHES}
 * crashes, for a transfer of 1 from A to B with A holding 1 (commits) or 0 (refused: cancels).
 */
class ProtocolModelTest {
    static final int CRASHES = 1;

    private static ModelChecker.Outcome check(Set<Bug> bugs, int balanceA) {
        ModelChecker.Outcome outcome = new ModelChecker(new ProtocolModel(bugs, CRASHES, balanceA, 0)).run();
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

    @ParameterizedTest
    @EnumSource(Bug.class)
    void deliberateBug_isCaughtWithATrace(Bug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), 1);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull();
        assertThat(outcome.trace()).isNotEmpty();
    }
}
