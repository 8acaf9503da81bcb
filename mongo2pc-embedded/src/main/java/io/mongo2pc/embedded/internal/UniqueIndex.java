package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

import java.util.List;
import java.util.UUID;

/**
 * Upstream's in-memory unique index with two shortcuts for what every update by {@code _id} asks
 * of it. Upstream derives an index key by splitting each key's path with a regular expression and
 * normalizing the values into new objects, and does so several times per update: to find the
 * document, to find its position again, and twice to compare the old and new keys (a profile of
 * the server under the library's load put 25% of its samples there).
 * <ul>
 *   <li>{@link #getPosition(Document)} of a single-field index looks a string, ObjectId or UUID
 *       value up directly: upstream's normalization leaves these values as they are.</li>
 *   <li>{@link #nullAwareEqualsKeys} answers "equal" at once when every key is a top-level field
 *       holding the very same immutable value (or absent) in both documents, which is what an
 *       update that does not touch the key leaves; anything else goes to upstream's comparison.</li>
 * </ul>
 * Both shortcuts give upstream's answers by construction (see {@code UniqueIndexTest}).
 * Thread-safety as upstream's: the collection calls it under its lock.
 */
final class UniqueIndex extends MemoryUniqueIndex {
    /** The indexed fields if all are plain top-level names (no path to split, no operator), else null. */
    private final List<String> plainKeys;

    UniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        List<String> names = keys.stream().map(IndexKey::getKey).toList();
        this.plainKeys = names.stream().allMatch(key -> key.indexOf('.') < 0 && !key.startsWith("$")) ? names : null;
    }

    @Override
    public Integer getPosition(Document document) {
        if (plainKeys != null && plainKeys.size() == 1) {
            Object value = document.get(plainKeys.get(0));
            if (unchangedByNormalization(value)) {
                return getPosition(new KeyValue(value));
            }
        }
        return super.getPosition(document);
    }

    @Override
    protected boolean nullAwareEqualsKeys(Document oldDocument, Document newDocument) {
        if (plainKeys == null) {
            return super.nullAwareEqualsKeys(oldDocument, newDocument);
        }
        for (String key : plainKeys) {
            boolean present = oldDocument.containsKey(key);
            if (present != newDocument.containsKey(key)) {
                return super.nullAwareEqualsKeys(oldDocument, newDocument);
            }
            Object value = oldDocument.get(key);
            if (present && (value != newDocument.get(key) || !isImmutable(value))) {
                return super.nullAwareEqualsKeys(oldDocument, newDocument);
            }
        }
        return true;
    }

    /** Values upstream's key normalization returns unchanged (numbers, maps and lists it rewrites). */
    private static boolean unchangedByNormalization(Object value) {
        return value instanceof String || value instanceof ObjectId || value instanceof UUID;
    }

    /** Values no update can change in place, so one reference in both documents means one key. */
    private static boolean isImmutable(Object value) {
        return value == null || value instanceof String || value instanceof ObjectId || value instanceof UUID
                || value instanceof Integer || value instanceof Long || value instanceof Double || value instanceof Boolean;
    }
}
