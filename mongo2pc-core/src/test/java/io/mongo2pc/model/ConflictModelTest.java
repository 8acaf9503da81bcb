package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of the conflict rule of round 1 (docs/TWO-ROUND.md, "Conflicts between
 * open transactions"; docs/MODEL.md): transactions that race for one order, its payment and an
 * account with funds for one, preparing everything at once. With live owners, one of them commits
 * in every finished state and a finished state is reachable from every state (no deadlock); with
 * crashes, pauses past the lease and takeovers, nothing is paid twice and no released prepare lands.
 */
class ConflictModelTest {

    /** A configuration: transactions (T1 the oldest), documents (t: take, h: hold), faults. */
    record Setup(String name, int txs, String kinds, int lease, int crashes, int losses, boolean takeovers) {
        /** Two payers of an order (take) from an account (hold), live owners, one answer lost. */
        static final Setup TWO_PAYERS = new Setup("two payers: order and account", 2, "th", 2, 0, 1, false);
        /** Two payers of an order, its payment insert and the account. */
        static final Setup TWO_PAYERS_THREE_DOCUMENTS = new Setup("two payers: order, account, payment", 2, "tht", 2, 0, 0, false);
        /** Three payers of an order from an account, live owners. */
        static final Setup THREE_PAYERS = new Setup("three payers: order and account", 3, "th", 1, 0, 0, false);
        /** Two payers, a crash, pauses past the lease and recovery's takeovers, one answer lost. */
        static final Setup TWO_PAYERS_CRASH = new Setup("two payers, a crash and takeovers", 2, "th", 2, 1, 1, true);

        ConflictModel model(Set<ConflictBug> bugs) {
            return new ConflictModel(bugs, txs, kinds, lease, crashes, losses, takeovers);
        }

        @Override
        public String toString() {
            return name + " (" + txs + " transactions, documents " + kinds + ", lease " + lease + ", crashes " + crashes
                    + ", lost answers " + losses + (takeovers ? ", takeovers" : ", live owners") + ")";
        }
    }

    private static ModelChecker.Outcome check(Set<ConflictBug> bugs, Setup setup) {
        long start = System.nanoTime();
        ConflictModel model = setup.model(bugs);
        ModelChecker.Outcome outcome = new ModelChecker<>(model, model.situations()).run();
        System.out.println("conflict model " + (bugs.isEmpty() ? "correct rule" : bugs) + ", " + setup + ": "
                + outcome.report() + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        return outcome;
    }

    @Test
    void conflictRule_racingPayersWithLiveOwners_oneCommitsInEveryFinishedState_andNoneWaitsForEver() {
        for (Setup setup : new Setup[] {Setup.TWO_PAYERS, Setup.TWO_PAYERS_THREE_DOCUMENTS, Setup.THREE_PAYERS}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(ConflictBug.class), setup);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) ->
                    assertThat(states).as(situation).isPositive());
        }
    }

    @Test
    void conflictRule_crashesPausesAndTakeovers_nothingPaidTwice_noReleasedPrepareLands() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(ConflictBug.class), Setup.TWO_PAYERS_CRASH);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
    }

    /** What each deliberate bug must be caught as: a part of the violation's message. */
    private static final Map<ConflictBug, String> CAUGHT_AS = Map.ofEntries(
            entry(ConflictBug.REFUSAL_BY_HOLDER_IS_FINAL, "nobody pays"),
            entry(ConflictBug.WAIT_WITHOUT_PRIORITY, "no finished state is reachable"),
            entry(ConflictBug.YIELD_BEFORE_SETTLED, "after its owner released its round"));

    @ParameterizedTest
    @EnumSource(ConflictBug.class)
    void conflictRule_deliberateBug_isCaughtWithAShortestTrace(ConflictBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), Setup.TWO_PAYERS);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull().contains(CAUGHT_AS.get(bug));
        assertThat(outcome.trace()).hasSizeGreaterThan(1);
    }
}
