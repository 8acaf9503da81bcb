package io.mongo2pc.internal.interactive;

import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;

/**
 * An attempt lost a conflict: thrown out of the context's reads (and so perhaps through the body,
 * which cannot keep the attempt alive by catching it: the attempt records it) and out of its
 * commit. The attempt is undone and the body runs again. Without a stack trace (it is expected).
 */
final class Lost extends RuntimeException {
    final transient ConflictKind kind;
    final transient DocumentRef document;
    final transient Object heldBy;

    Lost(ConflictKind kind, DocumentRef document, Object heldBy, String reason) {
        super(reason, null, false, false);
        this.kind = kind;
        this.document = document;
        this.heldBy = heldBy;
    }
}
