package io.mongo2pc.internal.format;

import com.mongodb.MongoClientException;

/**
 * A write was sent but its request failed without the server's answer: it may still be running,
 * or queued, and take effect later. Transient: retried, after the write's deadline has passed
 * (Engine.participantWrite), so that it can no longer take effect behind the retry's back.
 * Public for the wire, participants and state packages, as are the members they use.
 */
public final class WriteInDoubtException extends MongoClientException {
    public WriteInDoubtException(String message) {
        super(message);
    }
}
