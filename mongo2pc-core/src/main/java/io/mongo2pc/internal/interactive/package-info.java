/**
 * Interactive transactions ({@code TransactionManager.transact}, docs/INTERACTIVE.md): a body runs in
 * attempts that read committed documents with their versions, buffer their writes (update operators
 * applied here, read your writes), and commit them as the two-round commit's prepares, the documents
 * only read checked once the writes are taken; a lost attempt is undone and the body runs again,
 * after a conflict taking what it reads (wait-die by priority). Its door to the two-round commit is
 * {@code TwoRoundAccess} (reads, participant writes through {@code TakesAsRead} and
 * {@code InteractiveWrites}, commit insert, undo, outcomes); it may use format, wire, participants,
 * state, tutorial, tworound, reads and recovery.
 */
package io.mongo2pc.internal.interactive;
