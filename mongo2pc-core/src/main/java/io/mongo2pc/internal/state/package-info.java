/**
 * A transaction's state: each state change named ({@code Transition}) and performed by one
 * compare-and-set in {@code TransactionStore}; the owner's in-memory transaction, stored operations
 * read back and checked, late commits, tokens, and the crash points around each write. It may use
 * format, wire and participants.
 */
package io.mongo2pc.internal.state;
