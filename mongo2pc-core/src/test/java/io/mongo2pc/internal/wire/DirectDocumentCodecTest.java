package io.mongo2pc.internal.wire;

import com.mongodb.MongoClientSettings;
import org.bson.BsonBinaryWriter;
import org.bson.BsonReader;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The library's Document codec writes exactly the bytes the driver's own would, for any document. */
class DirectDocumentCodecTest {
    private static final CodecRegistry DEFAULT = MongoClientSettings.getDefaultCodecRegistry();
    /** As a collection of a client with a UUID representation has it (without one, no codec writes a UUID). */
    private static final CodecRegistry STANDARD_UUIDS = CodecRegistries.withUuidRepresentation(DEFAULT, UuidRepresentation.STANDARD);

    @Test
    void encode_randomDocuments_sameBytesAsTheDriversCodec() {
        CodecRegistry direct = DirectDocumentCodec.over(STANDARD_UUIDS);
        assertThat(direct.get(Document.class)).isInstanceOf(DirectDocumentCodec.class);
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 2_000; i++) {
            Document doc = randomDocument(random, 0);
            for (boolean collectible : new boolean[]{false, true}) {
                assertThat(bytes(direct, doc, collectible)).as("%s, collectible %s", doc, collectible)
                        .isEqualTo(bytes(STANDARD_UUIDS, doc, collectible));
            }
        }
    }

    @Test
    void encode_storedDocument_writesIdFirstAsTheDriverDoes() {
        Document doc = new Document("balance", 5L).append("_id", "A");
        assertThat(bytes(DirectDocumentCodec.over(DEFAULT), doc, true)).isEqualTo(bytes(DEFAULT, doc, true));
        assertThat(bytes(DirectDocumentCodec.over(DEFAULT), doc, false)).isEqualTo(bytes(DEFAULT, doc, false));
    }

    @Test
    void encode_uuidRepresentationAndUsersCodecs_arePassedThrough() {
        // A user's codec for Long (written as a string) and a UUID representation stay in force.
        Codec<Long> longAsString = new Codec<>() {
            @Override
            public void encode(BsonWriter writer, Long value, EncoderContext context) {
                writer.writeString("long:" + value);
            }

            @Override
            public Long decode(BsonReader reader, DecoderContext context) {
                return Long.parseLong(reader.readString().substring(5));
            }

            @Override
            public Class<Long> getEncoderClass() {
                return Long.class;
            }
        };
        CodecRegistry users = CodecRegistries.withUuidRepresentation(
                CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(longAsString), DEFAULT), UuidRepresentation.STANDARD);
        Document doc = new Document("n", 5L).append("u", UUID.randomUUID())
                .append("nested", new Document("n", 6L).append("list", List.of(7L, UUID.randomUUID())));
        assertThat(bytes(DirectDocumentCodec.over(users), doc, false)).isEqualTo(bytes(users, doc, false));
    }

    @Test
    void over_aUsersDocumentCodec_keepsIt() {
        CodecRegistry users = CodecRegistries.fromRegistries(
                CodecRegistries.fromCodecs(new org.bson.codecs.DocumentCodec() {
                }), DEFAULT);
        assertThat(DirectDocumentCodec.over(users)).isSameAs(users);
    }

    private static byte[] bytes(CodecRegistry registry, Document doc, boolean collectible) {
        BasicOutputBuffer buffer = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(buffer)) {
            registry.get(Document.class).encode(writer, doc, EncoderContext.builder().isEncodingCollectibleDocument(collectible).build());
        }
        return buffer.toByteArray();
    }

    private static Document randomDocument(SplittableRandom random, int depth) {
        Document doc = new Document();
        int fields = random.nextInt(6);
        if (random.nextInt(3) == 0) {
            fields++;
            doc.append("_id", randomValue(random, depth + 1));
        }
        for (int i = 0; i < fields; i++) {
            doc.append("f" + random.nextInt(20) + (random.nextBoolean() ? ".x" : ""), randomValue(random, depth + 1));
        }
        return doc;
    }

    private static Object randomValue(SplittableRandom random, int depth) {
        int kind = random.nextInt(depth > 3 ? 14 : 18);
        return switch (kind) {
            case 0 -> null;
            case 1 -> "s" + random.nextInt(1000) + (random.nextBoolean() ? "é€" : "");
            case 2 -> random.nextInt();
            case 3 -> random.nextLong();
            case 4 -> random.nextDouble();
            case 5 -> random.nextBoolean();
            case 6 -> new Date(random.nextLong(0, 4_000_000_000_000L));
            case 7 -> new ObjectId();
            case 8 -> Decimal128.parse(random.nextInt(100_000) + ".0" + random.nextInt(100));
            case 9 -> new BigDecimal(random.nextInt(100_000)).movePointLeft(random.nextInt(4));
            case 10 -> UUID.randomUUID();
            case 11 -> new Binary(new byte[]{(byte) random.nextInt(), 2, 3});
            case 12 -> (short) random.nextInt(100);
            case 13 -> new StringBuilder("x").toString();
            case 14 -> randomDocument(random, depth);
            case 15 -> randomList(random, depth, new ArrayList<>());
            case 16 -> randomList(random, depth, new LinkedList<>());
            default -> random.nextBoolean() ? Arrays.asList(randomValue(random, depth + 1)) : Map.of("k", "v");
        };
    }

    private static List<Object> randomList(SplittableRandom random, int depth, List<Object> list) {
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
            list.add(randomValue(random, depth + 1));
        }
        if (random.nextInt(5) == 0) {
            list.add(Arrays.asList(1, null, "two"));
        }
        return list;
    }
}
