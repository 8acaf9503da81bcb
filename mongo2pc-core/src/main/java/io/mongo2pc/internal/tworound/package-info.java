/**
 * The two-round commit, the default rules (docs/TWO-ROUND.md): round one ({@code RoundOne}), the
 * commit insert, the owner's decision after round one and its conflicts, the release, the resolving of
 * markers and locks met ({@code Resolver}) and the sweep. It may use format, wire, participants, state
 * and tutorial.
 */
package io.mongo2pc.internal.tworound;
