/**
 * Driver plumbing: named MongoClients and collections ({@code Targets}), documents encoded without a
 * codec lookup per value, group commit of writes ({@code WriteCombiner}, {@code Batcher}, and what a
 * marker write shows on its document), retries of transient errors, the server's clock, reads by id
 * batched across callers. It may use format only.
 */
package io.mongo2pc.internal.wire;
