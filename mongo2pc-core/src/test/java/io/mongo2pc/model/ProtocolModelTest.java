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
    /** Crashes per run; {@code -Dmodel.crashes=2} searches a bigger space (minutes). */
    static final int CRASHES = Integer.getInteger("model.crashes", 1);
    /** {@code -Dmodel.explicitHands=true}: every write is prepared into the hand, then sent (same verdicts, more states). */
    static final boolean EXPLICIT_HANDS = Boolean.getBoolean("model.explicitHands");

    /** Lease and maxClockSkew in ticks; how far the participants' server clock runs behind the coordinator's. */
    record Clocks(int lease, int skew, int behind) {
        static final Clocks ONE_CLOCK = new Clocks(2, 0, 0);
        /** The skew margin is paid but the clocks agree. */
        static final Clocks SAME_CLOCKS_WITH_MARGIN = new Clocks(2, 1, 0);
        /** The participants' clock runs behind by the whole allowed skew: the margin is exactly used up. */
        static final Clocks PARTICIPANT_CLOCK_BEHIND = new Clocks(2, 1, 1);

        @Override
        public String toString() {
            return "lease=" + lease + " skew=" + skew + " participantClockBehind=" + behind;
        }
    }

    private static ModelChecker.Outcome check(Set<Bug> bugs, Clocks clocks, int balanceA) {
        ProtocolModel model = new ProtocolModel(bugs, CRASHES, EXPLICIT_HANDS, clocks.lease(), clocks.skew(), clocks.behind(), balanceA, 0);
        ModelChecker.Outcome outcome = new ModelChecker<>(model).run();
        System.out.println("model " + (bugs.isEmpty() ? "correct protocol" : bugs) + ", " + clocks + ", crashes=" + CRASHES
                + ", A=" + balanceA + ", B=0: " + outcome.report());
        return outcome;
    }

    @Test
    void protocol_everyInterleavingWithPausesCrashesAndLostAcks_keepsEveryInvariantAndCanAlwaysFinish() {
        long total = 0;
        for (Clocks clocks : new Clocks[] {Clocks.ONE_CLOCK, Clocks.SAME_CLOCKS_WITH_MARGIN, Clocks.PARTICIPANT_CLOCK_BEHIND}) {
            for (int balanceA : new int[] {1, 0}) {
                ModelChecker.Outcome outcome = check(EnumSet.noneOf(Bug.class), clocks, balanceA);

                assertThat(outcome.violation()).as(outcome.report()).isNull();
                assertThat(outcome.finishedStates()).isPositive();
                total += outcome.states();
            }
        }
        System.out.println("correct protocol: " + total + " states explored in all");
        assertThat(total).isGreaterThan(10_000);
    }

    static Stream<Bug> harmfulBugs() {
        return Arrays.stream(Bug.values()).filter(b -> b.harmful);
    }

    static Stream<Bug> harmlessMutations() {
        return Arrays.stream(Bug.values()).filter(b -> !b.harmful);
    }

    private static Clocks clocksFor(Bug bug) {
        return bug == Bug.NO_SKEW_MARGIN ? Clocks.PARTICIPANT_CLOCK_BEHIND : Clocks.ONE_CLOCK;
    }

    @ParameterizedTest
    @MethodSource("harmfulBugs")
    void deliberateBug_isCaughtWithAShortestTrace(Bug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), clocksFor(bug), 1);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull();
        assertThat(outcome.trace()).isNotEmpty();
    }

    /** Defence in depth: without these guards the deadline fence alone still keeps every invariant. */
    @ParameterizedTest
    @MethodSource("harmlessMutations")
    void redundantGuardRemoved_noInvariantBreaks(Bug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), clocksFor(bug), 1);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
    }
}
