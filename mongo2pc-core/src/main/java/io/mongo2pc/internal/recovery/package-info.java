/**
 * Transactions whose owner is gone: recovery passes, a stale transaction taken over under the next
 * epoch and driven ({@code TakeOverAndDrive}), operators' cancels and awaited outcomes. It may use
 * format, wire, participants, state, admin, tutorial and tworound.
 */
package io.mongo2pc.internal.recovery;
