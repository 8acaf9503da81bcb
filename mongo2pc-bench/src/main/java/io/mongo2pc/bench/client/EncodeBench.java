package io.mongo2pc.bench.client;

import com.mongodb.MongoClientSettings;
import io.mongo2pc.internal.wire.DirectDocumentCodec;
import org.bson.BsonArray;
import org.bson.BsonBinaryWriter;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the driver spends encoding one apply write of a transfer (its filter and update, the shape
 * {@code Participants} builds: {@code _id}, the {@code $expr} deadline, the marker guard and cap,
 * the balance guard; {@code $inc} and {@code $push}), as {@code org.bson.Document}s through the
 * codec registry (what the library does) against the same content converted to {@code BsonDocument}
 * (no registry lookup per value). A JFR profile of the bench client put 30-40% of its samples in
 * registry-based encoding; this measures whether a rewrite would pay, and what the library's own
 * {@link DirectDocumentCodec} (the same bytes, no registry lookup per value) saves.
 *
 * <pre>
 * CP="mongo2pc-bench/target/mongo2pc-bench-0.1.0-SNAPSHOT.jar:$(cat mongo2pc-bench/target/classpath.txt)"
 * java -cp "$CP" org.openjdk.jmh.Main EncodeBench
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EncodeBench {

    private final CodecRegistry registry = MongoClientSettings.getDefaultCodecRegistry();
    private final Codec<Document> documentCodec = registry.get(Document.class);
    private final Codec<Document> directCodec = DirectDocumentCodec.over(registry).get(Document.class);
    private final Codec<BsonDocument> bsonDocumentCodec = registry.get(BsonDocument.class);
    private final Document filter = new Document("_id", "acc-17")
            .append("$expr", new Document("$lt", List.of("$$NOW", new Date(1_800_000_000_000L))))
            .append("pendingTransactions", new Document("$ne", "t-5f1c2e-123456"))
            .append("balance", new Document("$gte", 100L))
            .append("pendingTransactions.999", new Document("$exists", false))
            .append("_m2pc", new Document("$exists", false));
    private final Document update = new Document("$inc", new Document("balance", -100L))
            .append("$push", new Document("pendingTransactions", "t-5f1c2e-123456"));

    @Benchmark
    public int documentThroughRegistry() {
        return encode(documentCodec, filter, documentCodec, update);
    }

    @Benchmark
    public int directDocumentCodec() {
        return encode(directCodec, filter, directCodec, update);
    }

    @Benchmark
    public int convertedToBsonDocument() {
        return encode(bsonDocumentCodec, (BsonDocument) toBson(filter), bsonDocumentCodec, (BsonDocument) toBson(update));
    }

    private static <F, U> int encode(Codec<F> filterCodec, F filter, Codec<U> updateCodec, U update) {
        BasicOutputBuffer buffer = new BasicOutputBuffer(256);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            writer.writeStartDocument();
            writer.writeName("q");
            EncoderContext.builder().build().encodeWithChildContext(filterCodec, writer, filter);
            writer.writeName("u");
            EncoderContext.builder().build().encodeWithChildContext(updateCodec, writer, update);
            writer.writeEndDocument();
        }
        return buffer.getSize();
    }

    /** The conversion a rewrite would do; covers the types of the write above. */
    private BsonValue toBson(Object value) {
        if (value instanceof String s) {
            return new BsonString(s);
        } else if (value instanceof Integer i) {
            return new BsonInt32(i);
        } else if (value instanceof Long l) {
            return new BsonInt64(l);
        } else if (value instanceof Double d) {
            return new BsonDouble(d);
        } else if (value instanceof Boolean b) {
            return BsonBoolean.valueOf(b);
        } else if (value instanceof Date d) {
            return new BsonDateTime(d.getTime());
        } else if (value instanceof Document d) {
            BsonDocument out = new BsonDocument();
            d.forEach((k, v) -> out.append(k, toBson(v)));
            return out;
        } else if (value instanceof List<?> list) {
            List<BsonValue> values = new ArrayList<>(list.size());
            list.forEach(v -> values.add(toBson(v)));
            return new BsonArray(values);
        } else if (value == null) {
            return BsonNull.VALUE;
        }
        throw new IllegalArgumentException("not covered: " + value.getClass());
    }
}
