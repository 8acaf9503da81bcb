package io.mongo2pc.internal.wire;

import com.mongodb.client.model.UpdateOneModel;
import io.mongo2pc.internal.format.EntryName;
import io.mongo2pc.internal.format.Fields;
import io.mongo2pc.internal.format.Ids;
import org.bson.Document;

import java.util.List;
import java.util.Map;

/**
 * The visible effect of a marker write, read back from its document: a write that pushes a marker
 * its filter requires absent ({@code {f: {$ne: m}}} with {@code $push: {f: m}}, an apply) is in
 * effect once the marker is on the document; one that pulls a marker its filter requires present
 * ({@code {f: m}} with {@code $pull: {f: m}}, a release) once it is gone. A transaction puts its
 * marker on a document with one write only (one operation per document), so the marker tells
 * exactly whether that write took effect, whichever copy of it ran. Immutable.
 */
record MarkerEffect(Object id, String field, Object marker, boolean added, String entry, Object nonce) {

    /** The effect of {@code write} if it is a marker write on one document by {@code _id}; else null. */
    static MarkerEffect of(UpdateOneModel<Document> write) {
        if (!(write.getFilter() instanceof Document filter) || !(write.getUpdate() instanceof Document update)
                || write.getOptions().isUpsert()) {
            return null;
        }
        Object id = filter.get(Fields.ID);
        if (id == null || id instanceof Document) {
            return null;
        }
        if (update.get("$push") instanceof Document push) {
            for (Map.Entry<String, Object> e : push.entrySet()) {
                if (!(e.getValue() instanceof Document) && filter.get(e.getKey()) instanceof Document ne
                        && ne.size() == 1 && ne.containsKey("$ne") && Ids.sameId(ne.get("$ne"), e.getValue())) {
                    // A two-round prepare sets the entry of its marker: it is in effect only with its own nonce.
                    String entry = EntryName.supports(e.getValue()) ? EntryName.of(e.getValue()) : null;
                    if (entry != null && update.get("$set") instanceof Document set && set.get(entry) instanceof Document written) {
                        return new MarkerEffect(id, e.getKey(), e.getValue(), true, entry, written.get(EntryName.NONCE));
                    }
                    // The tutorial's rules: in effect only without a two-round entry of that id.
                    return new MarkerEffect(id, e.getKey(), e.getValue(), true, entry, null);
                }
            }
        }
        if (update.get("$pull") instanceof Document pull) {
            for (Map.Entry<String, Object> e : pull.entrySet()) {
                Object required = filter.get(e.getKey());
                if (!(e.getValue() instanceof Document) && !(required instanceof Document)
                        && Ids.sameId(required, e.getValue())) {
                    return new MarkerEffect(id, e.getKey(), e.getValue(), false, null, null);
                }
            }
        }
        return null;
    }

    /** True if {@code current} (the document as read after the write was answered, or null) shows this effect. */
    boolean shownBy(Document current) {
        if (current == null) {
            return false; // gone: what happened to it is for the writer's own path to tell
        }
        boolean present = current.get(field) instanceof List<?> markers
                && markers.stream().anyMatch(m -> Ids.sameId(m, marker));
        if (present && added && entry != null) {
            Object written = current.get(entry);
            return nonce == null ? !(written instanceof Document)
                    : written instanceof Document w && java.util.Objects.equals(w.get(EntryName.NONCE), nonce);
        }
        return present == added;
    }

    /** A key under which ids that MongoDB matches as equal (1, 1L, 1.0) are one. */
    static Object key(Object id) {
        if (id instanceof Number n && !(id instanceof Double d && (d.isNaN() || d.isInfinite()))
                && n.doubleValue() == Math.rint(n.doubleValue()) && Math.abs(n.doubleValue()) < 0x1p53) {
            return n.longValue();
        }
        return id;
    }
}
