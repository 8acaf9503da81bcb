package io.mongo2pc.internal.state;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The 4 MiB limit of a transaction's operations is checked against a cheap size bound and encoded
 * only when the bound exceeds it: the bound must never be below the real BSON size, or an
 * oversized transaction would pass.
 */
class MaxBytesPropertiesTest {

    @Property(tries = 500)
    void maxBytes_isNeverBelowTheEncodedSize(@ForAll("documents") Document doc) {
        long encoded = new RawBsonDocument(doc, new DocumentCodec()).getByteBuffer().remaining();
        assertThat(Validation.maxBytes(doc, 0)).isGreaterThanOrEqualTo(encoded);
    }

    @Provide
    Arbitrary<Document> documents() {
        return document(3);
    }

    private Arbitrary<Document> document(int depth) {
        Arbitrary<String> keys = Arbitraries.strings().all().ofMinLength(1).ofMaxLength(12)
                .filter(k -> k.indexOf('\0') < 0);
        return Arbitraries.maps(keys, value(depth)).ofMaxSize(6).map(Document::new);
    }

    private Arbitrary<Object> value(int depth) {
        List<Arbitrary<?>> leaves = List.of(
                Arbitraries.strings().all().ofMaxLength(40).filter(t -> t.indexOf('\0') < 0),
                Arbitraries.integers(), Arbitraries.longs(), Arbitraries.doubles(),
                Arbitraries.longs().map(l -> new Decimal128(l)),
                Arbitraries.of(true, false), Arbitraries.just(null),
                Arbitraries.create(ObjectId::new), Arbitraries.longs().between(0, 4_000_000_000_000L).map(Date::new));
        Arbitrary<Object> leaf = Arbitraries.oneOf(leaves.stream().map(a -> a.map(v -> (Object) v)).toList());
        if (depth == 0) {
            return leaf;
        }
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, leaf),
                net.jqwik.api.Tuple.of(1, document(depth - 1).map(d -> (Object) d)),
                net.jqwik.api.Tuple.of(1, leaf.list().ofMaxSize(15).map(l -> (Object) l)));
    }
}
