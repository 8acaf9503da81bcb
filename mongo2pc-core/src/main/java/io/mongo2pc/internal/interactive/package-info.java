/**
 * Interactive transactions ({@code TransactionManager.transact}, docs/INTERACTIVE.md): a body runs in
 * attempts that read committed documents with their versions, buffer their writes (update operators
 * applied here, read your writes), and commit them as the two-round commit's prepares, the documents
 * only read checked once the writes are taken; a lost attempt is undone and the body runs again,
 * after a conflict taking what it reads (wait-die by priority). It uses the rest of
 * {@code io.mongo2pc.internal} through {@code TwoRoundAccess} (reads, participant writes, commit
 * insert, undo, outcomes) and {@code Versions}, {@code CommittedImage}, {@code Engine}.
 */
package io.mongo2pc.internal.interactive;
