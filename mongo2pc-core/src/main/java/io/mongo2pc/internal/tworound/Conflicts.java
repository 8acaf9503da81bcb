package io.mongo2pc.internal.tworound;

import io.mongo2pc.Operation;
import io.mongo2pc.ReasonCode;
import io.mongo2pc.Values;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import io.mongo2pc.internal.participants.Exclusive;
import io.mongo2pc.internal.participants.Inserts;
import io.mongo2pc.internal.participants.Participants;
import io.mongo2pc.internal.participants.Priority;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Who holds a document against a prepare (docs/CONFLICTS.md): the other open transactions whose
 * lock, markers or holds refused it, read from the document as it is, once what could be resolved
 * was (committed or canceled transactions). A prepare refused with holders is a conflict, settled
 * by {@link Priority}; one refused without (the guard fails on committed data, the document is
 * missing, or exists whoever commits) is refused for good. Thread-safe (stateless).
 */
final class Conflicts {
    /** An open transaction's hold on a document: its id, its nonce and priority (both null under the tutorial's rules). */
    record Holder(Object txId, String nonce, Priority priority) { }

    private Conflicts() { }

    /**
     * The holders of {@code doc} that refused ({@code why}) the prepare of {@code op} by
     * {@code ownId} (with nonce {@code ownNonce}): a lock refuses every prepare, except an insert's
     * when the document exists whatever that lock's transaction does (an update's lock); markers
     * refuse an update's or a delete's take; and an increment refused by its guard is refused by the
     * holds of others on the fields its guard reads (their decreases, in the stored value until they
     * commit or cancel). None for a document full of markers: that is waited for, not a conflict.
     */
    static List<Holder> holders(Document doc, Operation op, Participants.Result why, Object ownId, String ownNonce) {
        List<Holder> holders = new ArrayList<>();
        if (doc == null || why.kind() == Participants.Kind.BUSY && why.code() == ReasonCode.TIMED_OUT) {
            return holders;
        }
        boolean guardFailed = why.kind() == Participants.Kind.REFUSED;
        Document lock = doc.get(Fields.LOCK, Document.class);
        if (lock != null && !Inserts.isLate(doc) && !Exclusive.isOf(lock, ownId, ownNonce)) {
            String kind = lock.getString("kind");
            if (!(op instanceof Operation.Insert) || "insert".equals(kind) || "delete".equals(kind)) {
                holders.add(new Holder(lock.get("tx"), lock.get(EntryName.NONCE) instanceof String n ? n : null, Priority.of(lock)));
            }
        }
        for (Object marker : doc.getList(Fields.MARKERS, Object.class, List.of())) {
            Document entry = EntryName.supports(marker) && doc.get(EntryName.of(marker)) instanceof Document d ? d : null;
            String nonce = entry != null && entry.get(EntryName.NONCE) instanceof String n ? n : null;
            if (Ids.sameId(marker, ownId) && Objects.equals(nonce, ownNonce)) {
                continue; // our own
            }
            boolean refuses = op.exclusive() && !(op instanceof Operation.Insert)
                    || op instanceof Operation.Increment && Ids.sameId(marker, ownId) // its entry's name is taken
                    || guardFailed && op instanceof Operation.Increment inc && entry != null && holdsGuarded(entry, inc.guard());
            if (refuses) {
                holders.add(new Holder(marker, nonce, Priority.of(entry)));
            }
        }
        return holders;
    }

    /** The holders among {@code holders} that a transaction of {@code priority} yields to (see {@link Priority}). */
    static List<Holder> olderThan(Priority priority, List<Holder> holders) {
        return holders.stream().filter(h -> priority.yieldsTo(h.priority())).toList();
    }

    /** True if {@code holder} still has its lock, or a marker, on {@code doc}. */
    static boolean holds(Document doc, Holder holder) {
        if (doc == null) {
            return false;
        }
        Document lock = doc.get(Fields.LOCK, Document.class);
        if (lock != null && Ids.sameId(lock.get("tx"), holder.txId()) && Objects.equals(lock.get(EntryName.NONCE), holder.nonce())) {
            return true;
        }
        for (Object marker : doc.getList(Fields.MARKERS, Object.class, List.of())) {
            if (Ids.sameId(marker, holder.txId())) {
                Document entry = EntryName.supports(marker) && doc.get(EntryName.of(marker)) instanceof Document d ? d : null;
                if (Objects.equals(entry == null ? null : entry.get(EntryName.NONCE), holder.nonce())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** True if {@code entry} holds a decrease of a field {@code guard} reads (any, for a guard of operators). */
    private static boolean holdsGuarded(Document entry, Document guard) {
        if (!(entry.get(EntryName.NOW) instanceof Document now) || now.isEmpty() || guard == null || guard.isEmpty()) {
            return false;
        }
        for (String field : guard.keySet()) {
            if (field.startsWith("$") || now.keySet().stream().anyMatch(held -> held.equals(field)
                    || held.startsWith(field + ".") || field.startsWith(held + "."))) {
                return true;
            }
        }
        return false;
    }

    /** The holders as the caller reads them, for a reason. */
    static String describe(List<Holder> holders) {
        return holders.stream().map(h -> Values.text(h.txId())).toList().toString();
    }
}
