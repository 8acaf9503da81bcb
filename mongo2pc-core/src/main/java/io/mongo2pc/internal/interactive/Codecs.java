package io.mongo2pc.internal.interactive;

import io.mongo2pc.InvalidTransactionException;
import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonDocumentWriter;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.DocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecConfigurationException;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.conversions.Bson;

/**
 * Typed documents through a target client's {@link CodecRegistry}: a {@link Document} from any
 * object the registry encodes (a POJO, a record, any {@link Bson}), and an object of a class from a
 * Document. Stateless.
 */
final class Codecs {
    private Codecs() { }

    /** {@code value} as a Document: a copy of a Document, else encoded by {@code registry}. */
    static Document toDocument(Object value, CodecRegistry registry, Object where) {
        if (value == null) {
            throw new InvalidTransactionException(where + ": a document is needed, got null");
        }
        if (value instanceof Document doc) {
            return BsonValues.copy(doc);
        }
        try {
            BsonDocument bson;
            if (value instanceof Bson b) {
                bson = b.toBsonDocument(Document.class, registry);
            } else {
                bson = new BsonDocument();
                @SuppressWarnings("unchecked")
                Codec<Object> codec = (Codec<Object>) registry.get(value.getClass());
                codec.encode(new BsonDocumentWriter(bson), value, EncoderContext.builder().isEncodingCollectibleDocument(true).build());
            }
            return new DocumentCodec(registry).decode(new BsonDocumentReader(bson), DecoderContext.builder().build());
        } catch (CodecConfigurationException e) {
            throw new InvalidTransactionException(where + ": the client's codec registry cannot write a " + value.getClass().getName()
                    + " as a document: " + e.getMessage());
        }
    }

    /** {@code doc} decoded as {@code type} by {@code registry}. */
    static <T> T fromDocument(Document doc, Class<T> type, CodecRegistry registry, Object where) {
        if (type.isInstance(doc)) {
            return type.cast(doc);
        }
        try {
            BsonDocument bson = doc.toBsonDocument(Document.class, registry);
            return registry.get(type).decode(new BsonDocumentReader(bson), DecoderContext.builder().build());
        } catch (CodecConfigurationException e) {
            throw new InvalidTransactionException(where + ": the client's codec registry cannot read a document as a "
                    + type.getName() + ": " + e.getMessage());
        }
    }
}
