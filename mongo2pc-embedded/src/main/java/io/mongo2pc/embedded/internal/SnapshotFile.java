package io.mongo2pc.embedded.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The snapshot file's format: a complete image of the data. Header {@code magic, nextGeneration}
 * (the first log segment to replay after it), then one record per collection, index and document,
 * then an end record. Written to a temporary file, forced and renamed over the old snapshot, so a
 * snapshot on disk is always whole.
 *
 * <p>Stateless; thread-safe.
 */
final class SnapshotFile {

    private static final int MAGIC = 0x4D325053;
    private static final int BUFFER_BYTES = 1 << 20;

    private SnapshotFile() {
    }

    /** Applies the snapshot at {@code path} to {@code state}; returns the first log generation to replay after it. */
    static long read(Path path, StoreState state) throws IOException {
        ByteBuffer in = DataDirectory.map(path);
        if (in.remaining() < 12 || in.getInt() != MAGIC) {
            throw new IOException("not a mongo2pc snapshot: " + path);
        }
        long nextGeneration = in.getLong();
        while (true) {
            LogRecord record = LogRecord.readFrom(in);
            if (record == null) {
                throw new IOException("snapshot " + path + " is corrupt at byte " + in.position()
                        + " (snapshots are written to a temporary file and renamed, so this is not a crash)");
            }
            if (record.type == LogRecord.Type.SNAPSHOT_END) {
                return nextGeneration;
            }
            state.apply(record);
        }
    }

    /**
     * Writes {@code image} as the directory's snapshot, to be followed by log generation
     * {@code nextGeneration}; returns the snapshot's size in bytes.
     */
    static long write(DataDirectory directory, StoreState image, long nextGeneration) throws IOException {
        Path tmp = directory.snapshotTmp();
        long size;
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuf buf = Unpooled.buffer(BUFFER_BYTES);
            buf.writeInt(MAGIC).writeLong(nextGeneration);
            image.forEachRecord(record -> {
                record.writeTo(buf);
                if (buf.readableBytes() >= BUFFER_BYTES) {
                    drain(buf, channel);
                }
            });
            new LogRecord(LogRecord.Type.SNAPSHOT_END, null, null, null).writeTo(buf);
            drain(buf, channel);
            channel.force(true);
            size = channel.size();
        }
        Files.move(tmp, directory.snapshot(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        directory.sync();
        return size;
    }

    private static void drain(ByteBuf buf, FileChannel channel) {
        try {
            ByteBuffer nio = buf.nioBuffer();
            while (nio.hasRemaining()) {
                channel.write(nio);
            }
            buf.clear();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
