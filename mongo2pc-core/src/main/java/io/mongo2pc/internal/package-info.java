/**
 * Internal: the implementation behind {@link io.mongo2pc.TransactionManager}, not part of mongo2pc's
 * API; nothing outside mongo2pc-core may import it (it changes without notice). {@code Engine} builds
 * the rooms (one subpackage each) from the settings and answers the manager's calls, and
 * {@code Starter} starts a transaction; they may use every room, and no room uses them.
 */
package io.mongo2pc.internal;
