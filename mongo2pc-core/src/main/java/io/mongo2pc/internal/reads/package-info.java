/**
 * Committed reads: a document as of the last committed transaction ({@code CommittedReader}),
 * several as one consistent cut, committed two-round transactions a reader met finished off its path
 * ({@code RollForward}), and the arithmetic of increments for readers. It may use format, wire,
 * participants, state, tutorial and tworound.
 */
package io.mongo2pc.internal.reads;
