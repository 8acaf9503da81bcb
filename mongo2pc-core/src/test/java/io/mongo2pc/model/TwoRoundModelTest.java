package io.mongo2pc.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exhaustive model check of the two-round-trip commit of docs/TWO-ROUND.md, the library's default
 * rules (see docs/MODEL.md): every interleaving of round 1 (the transaction
 * document's insert racing both prepares), the commit compare-and-set, releases, resolvers that
 * meet markers (roll forward, undo, tombstone), recovery's takeovers, with pauses, lost answers,
 * late copies of writes and crashes; one transfer alone, and two transfers sharing an account, also
 * with a reader of that account whose reads are apart.
 */
class TwoRoundModelTest {

    /** A configuration: transactions (1: T1 = B -> A; 2: and T2 = A -> C), balances of A, B, C, clocks, faults. */
    record Setup(String name, boolean exclusive, boolean refusesChange, int txs, int[] balances, int lease, int skew, int[] behind, int crashes, int delays, int helpers) {
        /** One transfer that commits; a crash, a write delayed past its sender's timeout; one clock. */
        static final Setup ONE_TRANSFER = new Setup("T1 commits", false, false, 1, new int[] {0, 1, 0}, 2, 0, new int[] {0, 0, 0}, 1, 1, 1);
        /** The same, refused by its guard (B has nothing): it cancels; no write delayed past a timeout. */
        static final Setup ONE_TRANSFER_REFUSED = new Setup("T1 refused", false, false, 1, new int[] {0, 0, 0}, 2, 0, new int[] {0, 0, 0}, 1, 0, 1);
        /** A's server runs a whole maxClockSkew behind the others': the margins are exactly used up. */
        static final Setup SPLIT_CLOCKS = new Setup("T1 commits, A's clock 1 behind", false, false, 1, new int[] {0, 1, 0}, 2, 1, new int[] {1, 0, 0}, 1, 0, 1);
        /** T1 = B -> A and T2 = A -> C with A = 0, B = 1, C = 0: T2's guard on A meets T1's credit. */
        static final Setup TWO_TRANSFERS = new Setup("T1 B->A and T2 A->C", false, false, 2, new int[] {0, 1, 0}, 2, 0, new int[] {0, 0, 0}, 0, 0, 0);

        /** T1 holds B and takes A for an exclusive update (A := 2 in round 1b); a crash, a late write. */
        static final Setup ONE_UPDATE = new Setup("T1 holds B, updates A", true, false, 1, new int[] {1, 1, 0}, 2, 0, new int[] {0, 0, 0}, 1, 1, 1);
        /** The same, refused by its hold's guard (B has nothing): the take of A is undone. */
        static final Setup ONE_UPDATE_REFUSED = new Setup("T1 refused, updates A", true, false, 1, new int[] {1, 0, 0}, 2, 0, new int[] {0, 0, 0}, 1, 0, 1);
        /** T1 holds B and updates A, and the server refuses the change (a unique index): T1 cancels, nothing stays. */
        static final Setup ONE_UPDATE_SERVER_REFUSES = new Setup("T1 holds B, its update of A refused by the server", true, true, 1,
                new int[] {1, 1, 0}, 2, 0, new int[] {0, 0, 0}, 1, 1, 1);
        /** T1 updates A exclusively while T2 = A -> C holds A: the lock and the hold exclude each other. */
        static final Setup UPDATE_AND_TRANSFER = new Setup("T1 updates A, T2 A->C", true, false, 2, new int[] {1, 1, 0}, 2, 0, new int[] {0, 0, 0}, 0, 0, 0);

        TwoRoundModel model(Set<TwoRoundBug> bugs) {
            return new TwoRoundModel(bugs, exclusive, refusesChange, txs, balances, lease, skew, behind, crashes, delays, helpers);
        }

        @Override
        public String toString() {
            return name + " (balances A,B,C=" + Arrays.toString(balances) + ", lease=" + lease + " skew=" + skew + " behind="
                    + Arrays.toString(behind) + ", crashes=" + crashes + " delays=" + delays + " extra processes=" + helpers + ")";
        }
    }

    private static ModelChecker.Outcome check(Set<TwoRoundBug> bugs, Setup setup) {
        return check(bugs, setup.toString(), setup.model(bugs));
    }

    private static ModelChecker.Outcome check(Set<TwoRoundBug> bugs, String setup, TwoRoundModel model) {
        long start = System.nanoTime();
        ModelChecker.Outcome outcome = new ModelChecker<>(model, model.situations()).run();
        System.out.println("two-round model " + (bugs.isEmpty() ? "correct protocol" : bugs) + ", " + setup + ": "
                + outcome.report() + "in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        return outcome;
    }

    /**
     * T1 = B -> A and T2 = A -> C with A = 1, so that both can mark A at once, and a reader of A whose
     * reads are apart (TwoRoundReader): the account, then each transaction's document, one per step.
     * Lease 1, pauses and lost answers, no crash.
     */
    private static ModelChecker.Outcome checkReaderOfTwoTransfers(Set<TwoRoundBug> bugs) {
        TwoRoundModel model = new TwoRoundModel(bugs, false, false, false, false, true, 2, new int[] {1, 1, 0}, 1, 0,
                new int[] {0, 0, 0}, 0, 0, 0);
        return check(bugs, "T1 B->A and T2 A->C, a reader of A (balances A,B,C=[1, 1, 0], lease=1, no crash)", model);
    }

    @Test
    void twoRoundCommit_oneTransferWithCrashesPausesLostAnswersAndLateWrites_keepsEveryInvariantAndCanAlwaysFinish() {
        long total = 0;
        for (Setup setup : new Setup[] {Setup.ONE_TRANSFER, Setup.ONE_TRANSFER_REFUSED, Setup.SPLIT_CLOCKS}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), setup);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            total += outcome.states();
            if (setup == Setup.ONE_TRANSFER) {
                assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) ->
                        assertThat(states).as(situation).isPositive());
            }
        }
        System.out.println("two-round model, one transfer: " + total + " states explored in all");
        assertThat(total).isGreaterThan(100_000);
    }

    @Test
    void twoRoundCommit_twoTransfersSharingAnAccount_committedReadsNeverNegativeAndReadCommittedExact() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), Setup.TWO_TRANSFERS);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
        assertThat(outcome.states()).isGreaterThan(100_000);
        assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) -> {
            if (situation.startsWith("T2")) {
                assertThat(states).as(situation).isPositive();
            }
        });
    }

    @Test
    void twoRoundCommit_exclusiveUpdateWithCrashesPausesLostAnswersAndLateWrites_keepsEveryInvariantAndCanAlwaysFinish() {
        for (Setup setup : new Setup[] {Setup.ONE_UPDATE, Setup.ONE_UPDATE_REFUSED, Setup.ONE_UPDATE_SERVER_REFUSES}) {
            ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), setup);

            assertThat(outcome.violation()).as(outcome.report()).isNull();
            assertThat(outcome.finishedStates()).isPositive();
            if (setup == Setup.ONE_UPDATE) {
                assertThat(outcome.states()).isGreaterThan(100_000);
                assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) ->
                        assertThat(states).as(situation).isPositive());
            }
        }
    }

    @Test
    void twoRoundCommit_exclusiveUpdateAndATransferOnOneAccount_excludeEachOtherAndReadCommittedExact() {
        ModelChecker.Outcome outcome = check(EnumSet.noneOf(TwoRoundBug.class), Setup.UPDATE_AND_TRANSFER);

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
        assertThat(outcome.reached()).as("situations the search must reach").allSatisfy((situation, states) -> {
            if (situation.startsWith("T2") || situation.startsWith("T1")) {
                assertThat(states).as(situation).isPositive();
            }
        });
    }

    /** What each deliberate bug must be caught as: a part of the violation's message. */
    private static final Map<TwoRoundBug, String> CAUGHT_AS = Map.ofEntries(
            entry(TwoRoundBug.CREDIT_AT_PREPARE, "the committed value of A is -1"),
            entry(TwoRoundBug.COMMIT_BEFORE_EVERY_PREPARE_ACKNOWLEDGED, "committed before its operation"),
            entry(TwoRoundBug.RESOLVER_BEFORE_DEADLINE, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.RESOLVER_WITHOUT_SKEW_MARGIN, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.RESOLVER_WITHOUT_TOMBSTONE, "committed before its operation"),
            entry(TwoRoundBug.PREPARE_WITHOUT_DEADLINE, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.ROLL_FORWARD_WITHOUT_MARKER, "in effect 2 times"),
            entry(TwoRoundBug.IN_DOUBT_PREPARE_RESENT_AT_ONCE, "was prepared after T1 was committed"),
            entry(TwoRoundBug.UNDO_BEFORE_PREPARES_SETTLED, "was prepared after T1 was canceled"),
            entry(TwoRoundBug.READ_IGNORES_COMMITTED_CREDIT, "readCommitted(A) computes 0 but the committed value is 1"),
            entry(TwoRoundBug.NO_RESOLUTION_WITHOUT_DOCUMENT, "no finished state is reachable"),
            entry(TwoRoundBug.HOLD_IGNORES_LOCK, "but the committed value is"),
            entry(TwoRoundBug.TAKE_IGNORES_MARKERS, "but the committed value is"),
            entry(TwoRoundBug.UNDO_WITHOUT_RESTORE, "but the committed value is 1"),
            entry(TwoRoundBug.CHANGE_AT_RELEASE, "but the committed value is 2"));

    private static Setup setupFor(TwoRoundBug bug) {
        return switch (bug) {
            case CREDIT_AT_PREPARE -> Setup.TWO_TRANSFERS;
            case HOLD_IGNORES_LOCK, TAKE_IGNORES_MARKERS -> Setup.UPDATE_AND_TRANSFER;
            case UNDO_WITHOUT_RESTORE, CHANGE_WITHOUT_LOCK -> Setup.ONE_UPDATE_REFUSED;
            case CHANGE_OVERWRITES_BEFORE_IMAGE -> Setup.ONE_UPDATE;
            case CHANGE_AT_RELEASE -> Setup.ONE_UPDATE_SERVER_REFUSES;
            case RESOLVER_WITHOUT_SKEW_MARGIN -> Setup.SPLIT_CLOCKS;
            case UNDO_BEFORE_PREPARES_SETTLED, OWNER_UNDO_WITHOUT_DEADLINE -> Setup.ONE_TRANSFER_REFUSED;
            // full searches (liveness, harmless mutation): the configuration without late writes
            case NO_RESOLUTION_WITHOUT_DOCUMENT, LATE_INSERT_ROLLED_FORWARD ->
                    new Setup("T1 commits", false, false, 1, new int[] {0, 1, 0}, 2, 0, new int[] {0, 0, 0}, 1, 0, 1);
            default -> Setup.ONE_TRANSFER;
        };
    }

    /** All but the reader's, which need the reader (see below). */
    static Stream<TwoRoundBug> harmfulBugs() {
        return Arrays.stream(TwoRoundBug.values()).filter(b -> b.harmful && !b.commitInsert
                && b != TwoRoundBug.READER_WITHOUT_STATE_REREAD && b != TwoRoundBug.READER_STILL_HELD_ONLY);
    }

    static Stream<TwoRoundBug> harmlessMutations() {
        return Arrays.stream(TwoRoundBug.values()).filter(b -> !b.harmful && !b.commitInsert);
    }

    @ParameterizedTest
    @MethodSource("harmfulBugs")
    void twoRoundCommit_deliberateBug_isCaughtWithAShortestTrace(TwoRoundBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), setupFor(bug));

        assertThat(outcome.violation()).as("the model must catch " + bug).isNotNull().contains(CAUGHT_AS.get(bug));
        assertThat(outcome.trace()).hasSizeGreaterThan(1);
    }

    /** Defence in depth, or a rule that only matters outside the model's scope (prune). */
    @ParameterizedTest
    @MethodSource("harmlessMutations")
    void twoRoundCommit_ruleRemovedThatTheModelShowsRedundant_noInvariantBreaks(TwoRoundBug bug) {
        ModelChecker.Outcome outcome = check(EnumSet.of(bug), setupFor(bug));

        assertThat(outcome.violation()).as(outcome.report()).isNull();
    }

    /**
     * A single-document read of A while T1 and T2 both mark it: the reader reads the states one after
     * another, reads again those not found committed once others were, and returns only the committed
     * value of one moment of its read (a committed mask some state of the read had).
     */
    @Test
    void readCommitted_twoTransactionsOnTheAccountStatesReadApart_returnsTheCommittedValueOfOneMoment() {
        ModelChecker.Outcome outcome = checkReaderOfTwoTransfers(EnumSet.noneOf(TwoRoundBug.class));

        assertThat(outcome.violation()).as(outcome.report()).isNull();
        assertThat(outcome.finishedStates()).isPositive();
        assertThat(outcome.reached().get("a reader read again a transaction not found committed while another was")).isPositive();
    }

    /**
     * Without the second read of the states not found committed: T1 is read not committed, T1 then T2
     * commit, T2 is read committed, and the reader returns A with T2 in and T1 out, a value A never held.
     */
    @Test
    void readCommitted_withoutRereadingTheStatesNotFoundCommitted_isCaughtWithAShortestTrace() {
        ModelChecker.Outcome outcome = checkReaderOfTwoTransfers(EnumSet.of(TwoRoundBug.READER_WITHOUT_STATE_REREAD));

        assertThat(outcome.violation()).as("the model must catch READER_WITHOUT_STATE_REREAD").isNotNull()
                .contains("no moment of the read had that committed value");
        assertThat(outcome.trace()).anyMatch(step -> step.contains("the reader reads T1's document (not committed)"))
                .anyMatch(step -> step.contains("the reader reads T2's document (committed)"));
    }
}
