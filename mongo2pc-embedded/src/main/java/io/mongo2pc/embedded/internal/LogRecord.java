package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * One change to the stored data, as written to the write-ahead log and to snapshots.
 *
 * <p>Every record is a full assignment (a document's after-image, a deletion by {@code _id}, a
 * collection or index definition), never a delta, so applying a record depends only on the
 * record itself. Immutable.
 *
 * <p>Framing on disk: {@code int length, int crc32c(payload), payload}; a record whose length or
 * checksum does not match is a torn tail and ends the log.
 */
public final class LogRecord {

    /** What a record does. The code is stored on disk: never renumber. */
    public enum Type {
        CREATE_COLLECTION(1), DROP_COLLECTION(2), PUT(3), DELETE(4), ADD_INDEX(5), DROP_INDEX(6),
        DROP_DATABASE(7), SNAPSHOT_END(8);

        final byte code;

        Type(int code) {
            this.code = (byte) code;
        }

        static Type of(byte code) {
            for (Type type : values()) {
                if (type.code == code) {
                    return type;
                }
            }
            throw new IllegalArgumentException("unknown log record type " + code);
        }
    }

    /** Largest record accepted when reading; anything larger is treated as a torn or corrupt tail. */
    static final int MAX_RECORD_BYTES = 64 * 1024 * 1024;

    private static final Document EMPTY = new Document();

    final Type type;
    final String database;
    final String collection;
    /** PUT: the after-image; DELETE: {_id: id}; CREATE_COLLECTION: {idField: f}; ADD_INDEX: the index description; DROP_INDEX: {name: n}. */
    final Document document;

    LogRecord(Type type, String database, String collection, Document document) {
        this.type = Objects.requireNonNull(type);
        this.database = database == null ? "" : database;
        this.collection = collection == null ? "" : collection;
        this.document = document == null ? EMPTY : document;
    }

    static LogRecord put(String db, String coll, Document afterImage) {
        return new LogRecord(Type.PUT, db, coll, afterImage);
    }

    static LogRecord delete(String db, String coll, String idField, Object id) {
        return new LogRecord(Type.DELETE, db, coll, new Document(idField, id));
    }

    /** Appends this record, framed, to {@code out}. */
    void writeTo(ByteBuf out) {
        int start = out.writerIndex();
        out.writeInt(0).writeInt(0);
        int payloadStart = out.writerIndex();
        out.writeByte(type.code);
        writeString(out, database);
        writeString(out, collection);
        BsonEncoder.encodeDocument(document, out);
        int payloadLength = out.writerIndex() - payloadStart;
        CRC32C crc = new CRC32C();
        crc.update(out.nioBuffer(payloadStart, payloadLength));
        out.setInt(start, payloadLength);
        out.setInt(start + 4, (int) crc.getValue());
    }

    byte[] toBytes() {
        ByteBuf buf = Unpooled.buffer(128);
        writeTo(buf);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    /**
     * Reads the record at the buffer's position and advances past it; returns null (position
     * unchanged) if what follows is not a whole, intact record (end of data or a torn tail).
     */
    static LogRecord readFrom(ByteBuffer in) {
        int start = in.position();
        if (in.remaining() < 8) {
            return null;
        }
        int length = in.getInt();
        int expectedCrc = in.getInt();
        if (length <= 0 || length > MAX_RECORD_BYTES || length > in.remaining()) {
            in.position(start);
            return null;
        }
        ByteBuffer payload = in.slice(in.position(), length);
        CRC32C crc = new CRC32C();
        crc.update(payload.duplicate());
        if ((int) crc.getValue() != expectedCrc) {
            in.position(start);
            return null;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        Type type = Type.of(buf.readByte());
        String database = readString(buf);
        String collection = readString(buf);
        Document document = BsonDecoder.decodeBson(buf);
        in.position(in.position() + length);
        return new LogRecord(type, database, collection, document);
    }

    private static void writeString(ByteBuf out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.writeBytes(bytes);
    }

    private static String readString(ByteBuf in) {
        int length = in.readInt();
        byte[] bytes = new byte[length];
        in.readBytes(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return type + " " + database + "." + collection + " " + document;
    }
}
