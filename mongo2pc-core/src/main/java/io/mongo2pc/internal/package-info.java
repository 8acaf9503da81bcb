/**
 * Internal: the implementation behind {@link io.mongo2pc.TransactionManager}, not part of
 * mongo2pc's API; nothing outside mongo2pc-core may import it (it changes without notice). The
 * rooms: {@link io.mongo2pc.internal.Engine} wires them; {@code Starter} starts transactions,
 * {@code Coordinator} drives them, {@code OwnerWrites} makes an owner's writes under its lease
 * ({@code Transition}s through {@code TransactionStore}, participant writes through
 * {@code Participants}), {@code Finishing} finishes committed ones, {@code TakeOverAndDrive},
 * {@code Recovery}, {@code Cancellation} and {@code Outcomes} handle transactions whose owner is
 * gone, {@code CommittedReader} and {@code ConsistentCut} read committed data, and
 * {@code Targets}, {@code WriteCombiner}, {@code Batcher}, {@code Retrier} and {@code ServerClock}
 * are the driver plumbing.
 */
package io.mongo2pc.internal;
