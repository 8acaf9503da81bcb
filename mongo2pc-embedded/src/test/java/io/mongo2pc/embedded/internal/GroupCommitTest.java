package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's group commit with siblings: a waiter holds its force back while other requests are
 * still being handled, and the last of them forces for all. Delays here are long (30 s), so a
 * request that waited for a delay instead of for its siblings shows as a timeout, not as a
 * slightly slower test.
 */
class GroupCommitTest {

    private static final Duration LONG_DELAY = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    /** One thread per request, whatever the machine's core count (the common pool may have one). */
    private final ExecutorService requests = Executors.newFixedThreadPool(2);

    @AfterEach
    void stopThreads() {
        requests.shutdownNow();
    }

    @Test
    void twoRequestsInFlight_shareOneForce() throws Exception {
        try (DurableStore store = started(LONG_DELAY)) {
            long forcesBefore = store.forces();
            store.requestStarted();
            store.requestStarted();

            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> write(store, 1), requests);
            CompletableFuture<Void> second = CompletableFuture.runAsync(() -> write(store, 2), requests);

            // neither may wait for the 30 s delay: the one arriving second completes the group
            CompletableFuture.allOf(first, second).get(10, TimeUnit.SECONDS);
            assertThat(store.forces() - forcesBefore).as("forces for two records of two concurrent requests")
                    .isEqualTo(1);
        }
    }

    @Test
    void aLoneRequest_forcesAtOnce() throws Exception {
        try (DurableStore store = started(LONG_DELAY)) {
            long forcesBefore = store.forces();
            store.requestStarted();

            CompletableFuture.runAsync(() -> write(store, 1), requests).get(10, TimeUnit.SECONDS);
            assertThat(store.forces() - forcesBefore).isEqualTo(1);
        }
    }

    @Test
    void aSiblingThatNeverWrites_holdsTheForceForAtMostTheDelay() throws Exception {
        Duration delay = Duration.ofMillis(300);
        try (DurableStore store = started(delay)) {
            long forcesBefore = store.forces();
            store.requestStarted();
            store.requestStarted(); // a sibling that never appends nor waits (e.g. a slow query)

            long start = System.nanoTime();
            CompletableFuture.runAsync(() -> write(store, 1), requests).get(10, TimeUnit.SECONDS);
            long elapsed = System.nanoTime() - start;

            assertThat(Duration.ofNanos(elapsed)).isGreaterThanOrEqualTo(delay);
            assertThat(store.forces() - forcesBefore).isEqualTo(1);
        }
    }

    @Test
    void zeroDelay_forcesEachRequestAtOnceEvenWithSiblings() throws Exception {
        try (DurableStore store = started(Duration.ZERO)) {
            long forcesBefore = store.forces();
            store.requestStarted();
            store.requestStarted();

            CompletableFuture.runAsync(() -> write(store, 1), requests).get(10, TimeUnit.SECONDS);
            assertThat(store.forces() - forcesBefore).isEqualTo(1);
        }
    }

    private DurableStore started(Duration delay) throws IOException {
        DurableStore store = DurableStore.open(tmp.resolve("data-" + delay.toMillis()),
                DurableStore.DEFAULT_COMPACT_THRESHOLD, delay);
        store.start();
        store.append(new LogRecord(LogRecord.Type.CREATE_COLLECTION, "d", "c", new Document("idField", "_id")));
        store.awaitAppended();
        return store;
    }

    private static void write(DurableStore store, int id) {
        store.append(LogRecord.put("d", "c", new Document("_id", id)));
        store.awaitAppended();
    }
}
