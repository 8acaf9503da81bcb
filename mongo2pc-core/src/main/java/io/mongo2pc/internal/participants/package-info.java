/**
 * Participant writes: apply, undo and release with the transaction's marker on the document, one
 * class per operation kind ({@code Participants} hands each write to its kind's class), the two-round
 * commit's entries and locks on participants ({@code Entries}, {@code Exclusive}), wait-die priority,
 * and why an apply was refused. It may use format and wire.
 */
package io.mongo2pc.internal.participants;
