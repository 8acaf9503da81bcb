package io.mongo2pc.embedded.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The data directory of one embedded server, locked while the server uses it: {@code snapshot.dat}
 * (see {@link SnapshotFile}), {@code wal-N.log} (the log segment of generation N, see
 * {@link LogSegment}) and {@code mongo2pc.lock} (held with an OS file lock).
 *
 * <p>Names, lists, deletes and syncs the files; what is in them is for the other classes to say.
 * Thread-safe: its methods keep no state but the lock.
 */
final class DataDirectory {

    private static final Logger log = LoggerFactory.getLogger(DataDirectory.class);

    static final String SNAPSHOT = "snapshot.dat";
    static final String SNAPSHOT_TMP = "snapshot.tmp";
    static final String LOCK = "mongo2pc.lock";
    private static final Pattern SEGMENT_NAME = Pattern.compile("wal-(\\d+)\\.log");

    private final Path dir;
    private final FileChannel lockChannel;
    private final FileLock fileLock;

    private DataDirectory(Path dir, FileChannel lockChannel, FileLock fileLock) {
        this.dir = dir;
        this.lockChannel = lockChannel;
        this.fileLock = fileLock;
    }

    /**
     * Creates {@code dir} if need be and locks it.
     *
     * @throws IllegalStateException if another server holds the directory
     */
    static DataDirectory lock(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path lockFile = dir.resolve(LOCK);
        FileChannel lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock fileLock;
        try {
            fileLock = lockChannel.tryLock();
        } catch (OverlappingFileLockException e) {
            fileLock = null;
        }
        if (fileLock == null) {
            lockChannel.close();
            throw new IllegalStateException("data directory " + dir.toAbsolutePath()
                    + " is in use by another embedded server (lock file " + lockFile.toAbsolutePath()
                    + " is held); stop that server or use another --data directory");
        }
        return new DataDirectory(dir, lockChannel, fileLock);
    }

    /** Releases the directory for another server. */
    void release() {
        try {
            fileLock.release();
            lockChannel.close();
        } catch (IOException e) {
            log.warn("cannot release the lock on {}", dir, e);
        }
    }

    Path path() {
        return dir;
    }

    Path snapshot() {
        return dir.resolve(SNAPSHOT);
    }

    Path snapshotTmp() {
        return dir.resolve(SNAPSHOT_TMP);
    }

    Path segment(long generation) {
        return dir.resolve("wal-" + generation + ".log");
    }

    /** The highest generation of a log segment in the directory (0 if none). */
    long maxSegmentGeneration() throws IOException {
        return segmentGenerations().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Deletes the log segments of generations below {@code generation}, then syncs the directory. */
    void deleteSegmentsBelow(long generation) throws IOException {
        for (long g : segmentGenerations()) {
            if (g < generation) {
                Files.deleteIfExists(segment(g));
            }
        }
        sync();
    }

    private List<Long> segmentGenerations() throws IOException {
        List<Long> generations = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(file -> {
                Matcher m = SEGMENT_NAME.matcher(file.getFileName().toString());
                if (m.matches()) {
                    generations.add(Long.parseLong(m.group(1)));
                }
            });
        }
        return generations;
    }

    /** Forces the directory's entries (a created, renamed or deleted file), where the platform allows it. */
    void sync() throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException e) {
            log.debug("cannot fsync directory {} on this platform", dir, e);
        }
    }

    /** Maps a whole file for reading. */
    static ByteBuffer map(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size > Integer.MAX_VALUE) {
                throw new IOException(path + " is larger than 2 GiB, which this store does not support");
            }
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
    }
}
