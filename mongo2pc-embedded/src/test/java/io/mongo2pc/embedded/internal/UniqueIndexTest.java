package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link UniqueIndex}'s shortcuts must give exactly upstream's answers: the same position for any
 * looked-up value (of any type, present or not, numbers of other types that compare equal), and
 * the same "keys unchanged" verdict (or refusal) for any pair of old and new documents, whether the new one
 * shares the old one's values, holds equal copies, other values, or lacks a key.
 */
class UniqueIndexTest {

    /** Upstream's index, with its key comparison reachable from this package. */
    private static final class Upstream extends MemoryUniqueIndex {
        Upstream(List<IndexKey> keys) {
            super("upstream", keys, false);
        }

        boolean keysEqual(Document oldDocument, Document newDocument) {
            return nullAwareEqualsKeys(oldDocument, newDocument);
        }
    }

    private static final List<List<IndexKey>> KEY_SETS = List.of(
            List.of(new IndexKey("_id", true)),
            List.of(new IndexKey("a", true)),
            List.of(new IndexKey("a", true), new IndexKey("b", true)),
            List.of(new IndexKey("a.b", true)),
            List.of(new IndexKey("$", true)));

    @Property(tries = 300)
    void getPosition_anyValue_sameAsUpstream(@ForAll("values") List<Object> stored, @ForAll("values") List<Object> probes) {
        List<IndexKey> keys = KEY_SETS.get(0);
        UniqueIndex ours = new UniqueIndex("ours", keys, false);
        Upstream upstream = new Upstream(keys);
        int position = 0;
        for (Object id : stored) {
            Document document = new Document("_id", id);
            // a value equal to one already stored (1 and 1.0, say) is refused by both alike
            boolean refusedByUpstream = refused(() -> upstream.checkAdd(document, null));
            assertThat(refused(() -> ours.checkAdd(document, null))).isEqualTo(refusedByUpstream);
            if (!refusedByUpstream) {
                upstream.add(document, position, null);
                ours.add(document, position, null);
                position++;
            }
        }
        List<Object> lookedUp = new ArrayList<>(stored);
        lookedUp.addAll(probes);
        for (Object probe : lookedUp) {
            Document query = new Document("_id", probe);
            assertThat(ours.getPosition(query)).as("position of %s (%s)", probe, typeOf(probe))
                    .isEqualTo(upstream.getPosition(query));
        }
    }

    @Property(tries = 1000)
    void nullAwareEqualsKeys_anyChange_sameAsUpstream(@ForAll("documents") Document old, @ForAll long seed) {
        Random random = new Random(seed);
        for (List<IndexKey> keys : KEY_SETS) {
            Document changed = changed(old, random);
            UniqueIndex ours = new UniqueIndex("ours", keys, false);
            Upstream upstream = new Upstream(keys);
            assertThat(outcome(() -> ours.nullAwareEqualsKeys(old, changed))).as("keys %s of %s and %s", keys, old, changed)
                    .isEqualTo(outcome(() -> upstream.keysEqual(old, changed)));
        }
    }

    /** A copy of {@code old} sharing its values, then changed the way an update might change it. */
    private static Document changed(Document old, Random random) {
        Document copy = new Document();
        copy.putAll(old);
        for (String key : List.of("_id", "a", "b")) {
            switch (random.nextInt(6)) {
                case 0 -> copy.remove(key);
                case 1 -> copy.put(key, VALUES.get(random.nextInt(VALUES.size())));
                case 2 -> {
                    if (copy.get(key) instanceof String s) {
                        copy.put(key, new String(s)); // equal, not the same reference
                    }
                }
                default -> { } // shared, as an update that does not touch the key leaves it
            }
        }
        return copy;
    }

    private static final List<Object> VALUES = List.of("x", "y", "", 1, 1L, 1.0, 2, 3_000_000_000L, -0.0, 0, Double.NaN,
            true, new ObjectId(), UUID.nameUUIDFromBytes(new byte[] {1}), new Document("b", 1), new Document("b", "x"),
            List.of(1, 2), List.of());

    @Provide
    Arbitrary<List<Object>> values() {
        return value().list().ofMaxSize(20);
    }

    @Provide
    Arbitrary<Document> documents() {
        Arbitrary<Object> value = value();
        return Arbitraries.maps(Arbitraries.of("_id", "a", "b", "c"), value).ofMaxSize(4).map(map -> {
            Document document = new Document();
            map.forEach(document::put);
            return document;
        });
    }

    private static Arbitrary<Object> value() {
        return Arbitraries.oneOf(
                Arbitraries.strings().alpha().ofMaxLength(3).map(Object.class::cast),
                Arbitraries.integers().between(-3, 3).map(Object.class::cast),
                Arbitraries.longs().between(-3, 3).map(Object.class::cast),
                Arbitraries.of(1.0, 2.5, -0.0, 0.0, Double.NaN, 9_007_199_254_740_993.0).map(Object.class::cast),
                Arbitraries.of(Long.MAX_VALUE, 9_007_199_254_740_993L).map(Object.class::cast),
                Arbitraries.of(new ObjectId(), new ObjectId()).map(Object.class::cast),
                Arbitraries.of(UUID.nameUUIDFromBytes(new byte[] {1}), UUID.nameUUIDFromBytes(new byte[] {2})).map(Object.class::cast),
                Arbitraries.of(true, false).map(Object.class::cast),
                Arbitraries.of(new Document("b", 1), new Document("b", 1.0), new Document("c", "x")).map(Object.class::cast));
    }

    /** The answer, or the class of what was thrown (upstream refuses parallel arrays in a compound key). */
    private static Object outcome(BooleanSupplier comparison) {
        try {
            return comparison.getAsBoolean();
        } catch (RuntimeException e) {
            return e.getClass();
        }
    }

    private static boolean refused(Runnable action) {
        try {
            action.run();
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    private static String typeOf(Object value) {
        return value == null ? "null" : value.getClass().getSimpleName();
    }
}
