package io.mongo2pc.bench.embedded;

import com.sun.nio.file.ExtendedOpenOption;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * What one durable write of a small group of log records costs this machine, wall time and CPU
 * (user + kernel, counted by the OS in 10 ms ticks), three ways: {@code buffered} (write to the page
 * cache, then {@code force(false)}, i.e. fdatasync: what the embedded server's log does),
 * {@code dsync} (one write with O_DSYNC) and {@code direct} (O_DIRECT + O_DSYNC, one aligned
 * 4 KiB block). The file is preallocated and forced first, as the server's log is. One thread,
 * so the figures are per write, not shared by a group. Linux only.
 *
 * <pre>java -cp ... io.mongo2pc.bench.embedded.SyncCost DIR [WRITES] [BYTES_PER_WRITE]</pre>
 */
public final class SyncCost {
    private static final int BLOCK = 4096;
    private static final long FILE_BYTES = 64L << 20;
    /** Linux counts CPU time in clock ticks of 10 ms. */
    private static final long TICK_NANOS = 10_000_000L;

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: SyncCost DIR [WRITES] [BYTES_PER_WRITE]");
        }
        Path dir = Files.createDirectories(Path.of(args[0]));
        int writes = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        int bytes = args.length > 2 ? Integer.parseInt(args[2]) : 600;
        if (bytes < 1 || bytes > BLOCK) {
            throw new IllegalArgumentException("BYTES_PER_WRITE must be 1 to " + BLOCK + ", was " + bytes);
        }
        System.out.printf(Locale.ROOT, "%d writes of %d bytes each way, in %s%n", writes, bytes, dir);
        for (int round = 1; round <= 2; round++) {
            for (String mode : new String[]{"buffered", "dsync", "direct"}) {
                measure(dir.resolve("synccost-" + mode), mode, writes, bytes);
            }
        }
    }

    private static void measure(Path file, String mode, int writes, int bytes) throws IOException {
        preallocate(file);
        try (FileChannel channel = open(file, mode)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(2 * BLOCK).alignedSlice(BLOCK);
            long wallStart = System.nanoTime();
            long cpuStart = EmbeddedThroughput.cpuNanos(ProcessHandle.current());
            long position = 0;
            for (int i = 0; i < writes; i++) {
                buffer.clear();
                if (mode.equals("direct")) {
                    // O_DIRECT writes whole aligned blocks: the log's tail block is rewritten
                    buffer.limit(BLOCK);
                    channel.write(buffer, position / BLOCK * BLOCK);
                } else {
                    buffer.limit(bytes);
                    channel.write(buffer, position);
                    if (mode.equals("buffered")) {
                        channel.force(false);
                    }
                }
                position = (position + bytes) % (FILE_BYTES - BLOCK);
            }
            long wall = System.nanoTime() - wallStart;
            long cpu = EmbeddedThroughput.cpuNanos(ProcessHandle.current()) - cpuStart;
            System.out.printf(Locale.ROOT, "%-8s %6.1f µs wall, %5.1f µs CPU per durable write (CPU ±%.1f µs)%n",
                    mode, wall / 1000.0 / writes, cpu / 1000.0 / writes, TICK_NANOS / 1000.0 / writes);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static FileChannel open(Path file, String mode) throws IOException {
        return switch (mode) {
            case "buffered" -> FileChannel.open(file, StandardOpenOption.WRITE);
            case "dsync" -> FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
            case "direct" -> FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC, ExtendedOpenOption.DIRECT);
            default -> throw new IllegalArgumentException(mode);
        };
    }

    private static void preallocate(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
            for (long written = 0; written < FILE_BYTES; written += zeros.capacity()) {
                zeros.clear();
                while (zeros.hasRemaining()) {
                    channel.write(zeros);
                }
            }
            channel.force(true);
        }
    }
}
