package io.mongo2pc.embedded.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One file of the write-ahead log, {@code wal-N.log}: a header {@code magic, generation}, then
 * records (see {@link LogRecord}) in the order they were appended, then zeros (the file is
 * preallocated ahead of its last record).
 *
 * <p>Appending is for one thread at a time (the store's write lock); {@link #force} may run on
 * several threads at once and concurrently with an append (it covers what was written before it
 * started).
 */
final class LogSegment {

    static final int HEADER_BYTES = 12;
    private static final int MAGIC = 0x4D32574C;
    private static final int PREALLOCATE_BYTES = 4 * 1024 * 1024;

    private final FileChannel channel;
    private final long generation;
    private final int preallocateChunk;
    /** Where the zeros written ahead of the records end; used by the appending thread only. */
    private long allocated = HEADER_BYTES;

    private LogSegment(FileChannel channel, long generation, int preallocateChunk) {
        this.channel = channel;
        this.generation = generation;
        this.preallocateChunk = preallocateChunk;
    }

    /**
     * Creates segment {@code generation} in {@code directory}, its header forced and the directory
     * synced. It preallocates in chunks of at most 4 MiB, less for a small {@code compactThreshold}.
     */
    static LogSegment create(DataDirectory directory, long generation, long compactThreshold) throws IOException {
        int chunk = (int) Math.min(PREALLOCATE_BYTES, Math.max(compactThreshold, 64 * 1024));
        return createWithChunk(directory, generation, chunk);
    }

    /** Creates the segment that follows this one, preallocated alike. */
    LogSegment createNext(DataDirectory directory) throws IOException {
        return createWithChunk(directory, generation + 1, preallocateChunk);
    }

    private static LogSegment createWithChunk(DataDirectory directory, long generation, int preallocateChunk)
            throws IOException {
        FileChannel channel = FileChannel.open(directory.segment(generation), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putLong(generation).flip();
        while (header.hasRemaining()) {
            channel.write(header);
        }
        channel.force(true);
        directory.sync();
        return new LogSegment(channel, generation, preallocateChunk);
    }

    /**
     * Checks the header of segment {@code generation}, read from {@code path} into {@code in}, and
     * leaves {@code in} at the first record. Returns false if the file is too short to hold a
     * header (a crash while it was created), leaving {@code in} as it was.
     *
     * @throws IOException if the header is not that of this generation's segment
     */
    static boolean readHeader(ByteBuffer in, long generation, Path path) throws IOException {
        if (in.remaining() < HEADER_BYTES) {
            return false;
        }
        if (in.getInt() != MAGIC || in.getLong() != generation) {
            throw new IOException("not a mongo2pc log of generation " + generation + ": " + path);
        }
        return true;
    }

    long generation() {
        return generation;
    }

    /** Where the next record goes (the end of the records, not of the file). */
    long position() throws IOException {
        return channel.position();
    }

    /** Whether any record was appended (or the segment is recovered with records). */
    boolean hasRecords() throws IOException {
        return channel.position() > HEADER_BYTES;
    }

    /** Writes {@code records} after the last record (to the page cache; {@link #force} makes them durable). */
    void append(ByteBuffer records) throws IOException {
        preallocate(channel.position() + records.remaining());
        while (records.hasRemaining()) {
            channel.write(records);
        }
    }

    /**
     * Forces what was written before the call to disk: fdatasync, which leaves out the file's
     * metadata (the blocks written are preallocated).
     */
    void force() throws IOException {
        channel.force(false);
    }

    /** Forces everything, metadata too, and closes the file. */
    void forceAndClose() throws IOException {
        channel.force(true);
        channel.close();
    }

    /** Closes the file (what was written and not forced may be lost in a crash). */
    void close() throws IOException {
        channel.close();
    }

    /**
     * Writes zeros ahead of the log's end and forces them with the file's metadata once, so that
     * the per-batch {@code force(false)} (fdatasync) overwrites allocated blocks and need not
     * commit the file system journal (which on a busy machine also carries everyone else's changes).
     */
    private void preallocate(long end) throws IOException {
        if (end <= allocated) {
            return;
        }
        ByteBuffer zeros = ByteBuffer.allocate(preallocateChunk);
        while (allocated < end) {
            zeros.clear();
            long at = allocated;
            while (zeros.hasRemaining()) {
                at += channel.write(zeros, at);
            }
            allocated = at;
        }
        channel.force(true);
    }
}
