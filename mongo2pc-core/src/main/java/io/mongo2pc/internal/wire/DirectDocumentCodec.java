package io.mongo2pc.internal.wire;

import io.mongo2pc.internal.format.Fields;
import org.bson.BsonReader;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.codecs.BooleanCodec;
import org.bson.codecs.Codec;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.DateCodec;
import org.bson.codecs.Decimal128Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.DoubleCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.IntegerCodec;
import org.bson.codecs.LongCodec;
import org.bson.codecs.ObjectIdCodec;
import org.bson.codecs.StringCodec;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;

import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * The {@link Document} codec of the library's collections: writes the same bytes as the driver's
 * own, faster. The driver's DocumentCodec looks a codec up in its registry for every value (a
 * hash of the class and a child registry per nested document), which was a third of the client's
 * CPU in a transfer. This one writes strings, numbers, booleans, dates, object ids, nested
 * documents and lists itself, each only where the registry it wraps would have used the driver's
 * standard codec for that class (checked once per class), and hands anything else to that
 * registry's codec, so a user's codecs and UUID representation still apply. Decoding, ids of
 * inserted documents and everything else are the wrapped registry's own Document codec's.
 * Thread-safe. Internal: not part of mongo2pc's API (public for the encoding benchmark).
 */
public final class DirectDocumentCodec implements CollectibleCodec<Document> {
    /** The context of a nested document: never a stored document's top level. */
    private static final EncoderContext NESTED = EncoderContext.builder().build();

    private enum Kind { STRING, INT32, INT64, DOUBLE, BOOLEAN, DATE, OBJECT_ID, DECIMAL128, DOCUMENT, LIST, OTHER }

    private final CodecRegistry registry;
    private final CollectibleCodec<Document> standard;
    private final ClassValue<Kind> kinds = new ClassValue<>() {
        @Override
        protected Kind computeValue(Class<?> type) {
            return kindOf(type);
        }
    };

    private DirectDocumentCodec(CodecRegistry registry, CollectibleCodec<Document> standard) {
        this.registry = registry;
        this.standard = standard;
    }

    /**
     * {@code registry} with this codec for Documents in front, if its own Document codec is the
     * driver's standard one (otherwise {@code registry} itself: a user's Document codec is kept).
     */
    public static CodecRegistry over(CodecRegistry registry) {
        Codec<Document> own = registry.get(Document.class);
        if (!(own instanceof CollectibleCodec<Document> collectible) || !own.getClass().equals(org.bson.codecs.DocumentCodec.class)) {
            return registry;
        }
        return CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(new DirectDocumentCodec(registry, collectible)), registry);
    }

    private Kind kindOf(Class<?> type) {
        if (Document.class.equals(type)) {
            return Kind.DOCUMENT;
        }
        Codec<?> codec;
        try {
            codec = registry.get(type);
        } catch (RuntimeException e) {
            return Kind.OTHER; // no codec: the registry says so again when the value is written
        }
        Class<?> c = codec.getClass();
        if (type == String.class && c == StringCodec.class && ((StringCodec) codec).getRepresentation() == BsonType.STRING) {
            return Kind.STRING;
        } else if (type == Integer.class && c == IntegerCodec.class) {
            return Kind.INT32;
        } else if (type == Long.class && c == LongCodec.class) {
            return Kind.INT64;
        } else if (type == Double.class && c == DoubleCodec.class) {
            return Kind.DOUBLE;
        } else if (type == Boolean.class && c == BooleanCodec.class) {
            return Kind.BOOLEAN;
        } else if (type == Date.class && c == DateCodec.class) {
            return Kind.DATE;
        } else if (type == ObjectId.class && c == ObjectIdCodec.class) {
            return Kind.OBJECT_ID;
        } else if (type == Decimal128.class && c == Decimal128Codec.class) {
            return Kind.DECIMAL128;
        } else if (List.class.isAssignableFrom(type) && "org.bson.codecs.CollectionCodec".equals(c.getName())) {
            return Kind.LIST;
        }
        return Kind.OTHER;
    }

    @Override
    public void encode(BsonWriter writer, Document document, EncoderContext context) {
        writer.writeStartDocument();
        boolean collectible = context.isEncodingCollectibleDocument();
        if (collectible && document.containsKey(Fields.ID)) {
            // As the driver's codec: a stored document's _id first.
            writer.writeName(Fields.ID);
            writeValue(writer, document.get(Fields.ID), context);
        }
        for (Map.Entry<String, Object> e : document.entrySet()) {
            if (collectible && e.getKey().equals(Fields.ID)) {
                continue;
            }
            writer.writeName(e.getKey());
            writeValue(writer, e.getValue(), context);
        }
        writer.writeEndDocument();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void writeValue(BsonWriter writer, Object value, EncoderContext context) {
        if (value == null) {
            writer.writeNull();
            return;
        }
        switch (kinds.get(value.getClass())) {
            case STRING -> writer.writeString((String) value);
            case INT32 -> writer.writeInt32((Integer) value);
            case INT64 -> writer.writeInt64((Long) value);
            case DOUBLE -> writer.writeDouble((Double) value);
            case BOOLEAN -> writer.writeBoolean((Boolean) value);
            case DATE -> writer.writeDateTime(((Date) value).getTime());
            case OBJECT_ID -> writer.writeObjectId((ObjectId) value);
            case DECIMAL128 -> writer.writeDecimal128((Decimal128) value);
            case DOCUMENT -> encode(writer, (Document) value, NESTED);
            case LIST -> {
                writer.writeStartArray();
                for (Object element : (List<Object>) value) {
                    writeValue(writer, element, context);
                }
                writer.writeEndArray();
            }
            default -> {
                Codec codec = registry.get(value.getClass());
                context.encodeWithChildContext(codec, writer, value);
            }
        }
    }

    @Override
    public Document decode(BsonReader reader, DecoderContext context) {
        return standard.decode(reader, context);
    }

    @Override
    public Class<Document> getEncoderClass() {
        return Document.class;
    }

    @Override
    public Document generateIdIfAbsentFromDocument(Document document) {
        return standard.generateIdIfAbsentFromDocument(document);
    }

    @Override
    public boolean documentHasId(Document document) {
        return standard.documentHasId(document);
    }

    @Override
    public BsonValue getDocumentId(Document document) {
        return standard.getDocumentId(document);
    }
}
