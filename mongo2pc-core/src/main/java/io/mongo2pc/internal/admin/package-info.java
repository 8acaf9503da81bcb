/**
 * Operators' queries: counts and recovery lag, pruning of finished transactions, transactions
 * listed with filters and a cursor, stored transactions read as views. It may use format, wire and
 * state.
 */
package io.mongo2pc.internal.admin;
