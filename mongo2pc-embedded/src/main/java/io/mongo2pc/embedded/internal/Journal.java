package io.mongo2pc.embedded.internal;

/**
 * Where the backend reports each change, in the order it is applied. Called while the changed
 * collection is locked, so the journal order is the order in which clients can observe changes.
 * Implementations must be thread-safe and must not block for I/O.
 */
interface Journal {

    /** Records the change and returns its log sequence number (0 when nothing is kept). */
    long append(LogRecord record);

    /** Keeps nothing: the in-memory server, and recovery while it replays the log. */
    Journal NONE = record -> 0L;
}
