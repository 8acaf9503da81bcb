package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of the design in docs/COMMIT-INSERT.md (the library's default commit):
 * round 1 is the prepares alone, and the commit point is the transaction document's first write,
 * inserted {@code applied}, which counts only if it ran before the round's deadline. The model is
 * {@link TwoRoundModel} with {@code commitInsert} and with {@code prune} deleting any finished
 * document at any time, so that a late commit insert can land after a tombstone was pruned; crashes,
 * pauses, lost answers and late copies of every write as in {@link TwoRoundModelTest}. Also checks
 * today's rules (the pending document, its renewal and its commit compare-and-set) once prune is in
 * the model, as the variant falls back on them when a prepare is in doubt.
 */
class CommitInsertModelTest {

    /** A configuration; prune on unless {@link #TWO_TRANSFERS} (whose search it makes too big for the suite). */
    record Setup(String name, boolean exclusive, int txs, int[] balances, int skew, int[] behind, int crashes, int delays, int helpers) {
        static final Setup ONE_TRANSFER = new Setup("T1 commits", false, 1, new int[] {0, 1, 0}, 0, new int[] {0, 0, 0}, 1, 1, 1);
        static final Setup ONE_TRANSFER_REFUSED = new Setup("T1 refused", false, 1, new int[] {0, 0, 0}, 0, new int[] {0, 0, 0}, 1, 0, 1);
        static final Setup SPLIT_CLOCKS = new Setup("T1 commits, A's clock 1 behind", false, 1, new int[] {0, 1, 0}, 1,
                new int[] {1, 0, 0}, 1, 0, 1);
        static final Setup TWO_TRANSFERS = new Setup("T1 B->A and T2 A->C", false, 2, new int[] {0, 1, 0}, 0, new int[] {0, 0, 0}, 0, 0, 0);
        static final Setup ONE_UPDATE = new Setup("T1 holds B, updates A", true, 1, new int[] {1, 1, 0}, 0, new int[] {0, 0, 0}, 1, 0, 1);
        /** Small: for the bugs (no crash, no delayed write). */
        static final Setup SMALL = new Setup("T1 commits", false, 1, new int[] {0, 1, 0}, 0, new int[] {0, 0, 0}, 0, 0, 1);

        TwoRoundModel model(Set<TwoRoundBug> bugs, boolean commitInsert) {
            return model(bugs, commitInsert, false);
        }

        TwoRoundModel model(Set<TwoRoundBug> bugs, boolean commitInsert, boolean reader) {
            return new TwoRoundModel(bugs, exclusive, false, commitInsert, txs == 1, reader, txs, balances, 2, skew, behind, crashes,
                    delays, helpers);
        }

        @Override
        public String toString() {
            return name + " (balances A,B,C=" + Arrays.toString(balances) + ", lease=2 skew=" + skew + " behind=" + Arrays.toString(behind)
                    + ", crashes=" + crashes + " delays=" + delays + " extra processes=" + helpers + (txs == 1 ? ", prune)" : ")");
        }
    }

    private static ModelChecker.Outcome check(Set<TwoRoundBug> bugs, Setup setup, boolean commitInsert) {
        return check(bugs, setup, commitInsert, false);
    }

    private static ModelChecker.Outcome check(Set<TwoRoundBug> bugs, Setup setup, boolean commitInsert, boolean reader) {
        long start = System.nanoTime();
        TwoRoundModel model = setup.model(bugs, commitInsert, reader);
        ModelChecker.Outcome outcome = new ModelChecker<>(model, model.situations()).run();
        System.out.println((commitInsert ? "commit-insert model " : "two-round model with prune ") + (reader ? "and a reader " : "")
                + (bugs.isEmpty() ? "correct protocol" : bugs) + ", " + setup + ": " + outcome.report()
                + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        return outcome;
    }

    @Test
    void commitInsert_oneTransferWithCrashesPausesLostAnswersLateWritesAndPrune_keepsEveryInvariantAndCanAlwaysFinish() {
        for (Setup setup : new Setup[] {Setup.ONE_TRANSFER, Setup.ONE_TRANSFER_REFUSED, Setup.SPLIT_CLOCKS}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), setup, true);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            if (setup == Setup.ONE_TRANSFER) {
                assertThat(outcome.states()).isGreaterThan(100_000);
                assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) ->
                        assertThat(states).as(situation).isPositive());
            }
        }
    }

    /**
     * The owner as the library codes it: a prepare not in effect after round 1 (refused, expired,
     * in doubt) falls back on the pending insert and today's rules, never a cancel without a document.
     */
    @Test
    void commitInsertAsCoded_fallbackAtAnyPrepareNotInEffect_keepsEveryInvariantAndCanAlwaysFinish() {
        for (Setup setup : new Setup[] {Setup.ONE_TRANSFER, Setup.ONE_TRANSFER_REFUSED, Setup.SPLIT_CLOCKS, Setup.ONE_UPDATE}) {
            ModelChecker.Outcome outcome = check(EnumSet.of(TwoRoundBug.FALLBACK_AT_ANY_PREPARE_NOT_IN_EFFECT), setup, true);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
        }
        // The fallback is reached and checked: its pending document, inserted late, must not commit.
        ModelChecker.Outcome lateCommit = check(EnumSet.of(TwoRoundBug.FALLBACK_AT_ANY_PREPARE_NOT_IN_EFFECT,
                TwoRoundBug.COMMIT_CAS_IGNORES_LATE_INSERT), Setup.ONE_TRANSFER, true);
        assertThat(lateCommit.violation()).as("the fallback's late pending document committed").isNotNull();
    }

    @Test
    void commitInsert_twoTransfersSharingAnAccount_committedReadsNeverNegativeAndReadCommittedExact() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), Setup.TWO_TRANSFERS, true);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
        assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) -> {
            if (situation.startsWith("T2")) {
                assertThat(states).as(situation).isPositive();
            }
        });
    }

    @Test
    void commitInsert_exclusiveUpdate_roundOneBThenTheCommitInsert_keepsEveryInvariant() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), Setup.ONE_UPDATE, true);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
    }

    /**
     * Today's rules with prune in the model (a finished document not modified for a lease): the
     * renewal and the commit of a late pending document are refused.
     */
    @Test
    void todaysRules_withPrune_keepEveryInvariant() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), Setup.ONE_TRANSFER, false);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
    }

    /**
     * A reader whose reads are apart (the account, then the documents of the transactions it names,
     * as a cut reads them) while prune deletes finished documents: it returns only a committed value
     * of some moment of its read. A transaction it finds without a document counts as not committed
     * only if its marker is still there when it reads the account again.
     */
    @Test
    void commitInsertWithPrune_readerWithItsReadsApart_returnsOnlyACommittedValueOfTheReadsMoments() {
        Setup refused = new Setup("T1 refused", false, 1, new int[] {0, 0, 0}, 0, new int[] {0, 0, 0}, 0, 0, 1);
        for (Setup setup : new Setup[] {Setup.SMALL, refused}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), setup, true, true);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            if (setup == Setup.SMALL) {
                assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) -> {
                    if (situation.startsWith("a reader")) {
                        assertThat(states).as(situation).isPositive();
                    }
                });
            }
        }
    }

    @Test
    void commitInsertWithPrune_readerWithoutRecheck_isCaughtWithAShortestTrace() {
        ModelChecker.Outcome outcome = check(EnumSet.of(TwoRoundBug.READER_WITHOUT_RECHECK), Setup.SMALL, true, true);

        assertThat(outcome.violation()).as("the model must catch READER_WITHOUT_RECHECK").isNotNull()
                .contains("no moment of the read had that committed value");
        assertThat(outcome.trace()).hasSizeGreaterThan(1);
        System.out.println(String.join("\n", outcome.trace()));
    }

    /** What each deliberate bug must be caught as: a part of the violation's message. */
    private static final Map<TwoRoundBug, String> CAUGHT_AS = Map.ofEntries(
            entry(TwoRoundBug.OWNER_TRUSTS_LATE_INSERT, "told committed but T1 is canceled"),
            entry(TwoRoundBug.OWNER_CANCELS_AMBIGUOUS_LATE_INSERT, "told canceled but T1 committed"),
            entry(TwoRoundBug.READER_IGNORES_LATENESS, "readCommitted(A) computes 1 but the committed value is 0"),
            entry(TwoRoundBug.NO_LATENESS_RULE, "readCommitted(A) computes 1 but the committed value is 0"),
            entry(TwoRoundBug.PRUNE_UNFINISHED, "readCommitted(A) computes 0 but the committed value is 1"),
            entry(TwoRoundBug.CANCEL_WITHOUT_DOCUMENT_BEFORE_SETTLED, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.RENEW_IGNORES_LATE_INSERT, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.RECOVERY_ROLLS_PENDING_FORWARD, "was prepared after T1 was committed"),
            entry(TwoRoundBug.COMMIT_CAS_IGNORES_LATE_INSERT, "readCommitted(A) computes 1 but the committed value is 0"),
            entry(TwoRoundBug.RESOLVER_BEFORE_DEADLINE, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.RESOLVER_WITHOUT_SKEW_MARGIN, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.PREPARE_WITHOUT_DEADLINE, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.COMMIT_BEFORE_EVERY_PREPARE_ACKNOWLEDGED, "committed before its operation"),
            entry(TwoRoundBug.IN_DOUBT_PREPARE_RESENT_AT_ONCE, "was prepared after T1 was committed"));

    private static Setup setupFor(TwoRoundBug bug) {
        return switch (bug) {
            case RESOLVER_WITHOUT_SKEW_MARGIN -> new Setup("T1 commits, A's clock 1 behind", false, 1, new int[] {0, 1, 0}, 1,
                    new int[] {1, 0, 0}, 0, 0, 1);
            case CANCEL_WITHOUT_DOCUMENT_BEFORE_SETTLED -> new Setup("T1 refused", false, 1, new int[] {0, 0, 0}, 0,
                    new int[] {0, 0, 0}, 0, 0, 1);
            case OWNER_CANCELS_AMBIGUOUS_LATE_INSERT -> Setup.ONE_TRANSFER;
            case IN_DOUBT_PREPARE_RESENT_AT_ONCE -> new Setup("T1 commits", false, 1, new int[] {0, 1, 0}, 0, new int[] {0, 0, 0}, 0, 1, 1);
            default -> Setup.SMALL;
        };
    }

    /** Either rule alone stops a copy of the pending insert from running a transfer twice: prune younger than a lease is harmless. */
    @Test
    void todaysRulesWithPrune_pruneYoungerThanALease_isHarmlessOnceRecoveryRequiresEveryPrepareInEffect() {
        ModelChecker.Outcome outcome = check(EnumSet.of(TwoRoundBug.PRUNE_YOUNG), Setup.ONE_TRANSFER, false);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
    }

    @ParameterizedTest
    @EnumSource(value = TwoRoundBug.class, names = {"OWNER_TRUSTS_LATE_INSERT", "OWNER_CANCELS_AMBIGUOUS_LATE_INSERT",
            "READER_IGNORES_LATENESS", "NO_LATENESS_RULE", "PRUNE_UNFINISHED", "CANCEL_WITHOUT_DOCUMENT_BEFORE_SETTLED",
            "RESOLVER_BEFORE_DEADLINE", "RESOLVER_WITHOUT_SKEW_MARGIN", "PREPARE_WITHOUT_DEADLINE",
            "COMMIT_BEFORE_EVERY_PREPARE_ACKNOWLEDGED", "IN_DOUBT_PREPARE_RESENT_AT_ONCE"})
    void commitInsert_deliberateBug_isCaughtWithAShortestTrace(TwoRoundBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), setupFor(bug), true);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull().contains(CAUGHT_AS.get(bug));
        assertThat(outcome.trace()).hasSizeGreaterThan(1);
    }

    /**
     * Rules of today's pending document that the model shows necessary once prune is in it; recovery
     * rolling a pending document forward runs a transfer twice when prune may also delete a document
     * younger than a lease (a copy of its insert, still in flight, lands before its deadline).
     */
    @ParameterizedTest
    @EnumSource(value = TwoRoundBug.class, names = {"RENEW_IGNORES_LATE_INSERT", "COMMIT_CAS_IGNORES_LATE_INSERT",
            "RECOVERY_ROLLS_PENDING_FORWARD"})
    void todaysRulesWithPrune_deliberateBug_isCaughtWithAShortestTrace(TwoRoundBug bug) {
        boolean twice = bug == TwoRoundBug.RECOVERY_ROLLS_PENDING_FORWARD;
        ModelChecker.Outcome outcome = check(twice ? EnumSet.of(bug, TwoRoundBug.PRUNE_YOUNG) : EnumSet.of(bug),
                twice ? Setup.ONE_TRANSFER : Setup.SMALL, false);

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull().contains(CAUGHT_AS.get(bug));
        assertThat(outcome.trace()).hasSizeGreaterThan(1);
    }
}
