package io.mongo2pc.model;

/**
 * Deliberate bugs {@link ConflictModel} can be run with, each removing one rule of the conflict
 * rule of round 1 (docs/TWO-ROUND.md, "Conflicts between open transactions"); the checker must find
 * a counterexample for each.
 */
enum ConflictBug {
    /** Today's rule before the conflict rule: a prepare refused by another open transaction's hold cancels for good. */
    REFUSAL_BY_HOLDER_IS_FINAL,
    /** No priority: every conflict waits, holding what it has (two transactions that each hold part wait for ever). */
    WAIT_WITHOUT_PRIORITY,
    /** A transaction yields (undoes its round) while a prepare of the round is in doubt: its late copy lands after the release. */
    YIELD_BEFORE_SETTLED
}
