package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

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

    /**
     * Many requests at once, through log switches and compactions: every one returns (a waiter
     * that nobody wakes hangs here until the timeout) only once its record is durable, and every
     * record is there after a reopen; with a commit delay they share forces. With one force at a
     * time most waiters wait for a force that does not cover them and must be woken to force for
     * the others; with no delay every such wait is a park until woken.
     */
    @ParameterizedTest(name = "at most {0} forces at once, commit delay {1} us")
    @CsvSource({"1, 0", "1, 1000", "4, 0", "4, 1000"})
    void manyConcurrentRequests_allReturnDurable_throughLogSwitches(int maxConcurrentForces, int delayMicros)
            throws Exception {
        int threads = 16;
        int perThread = 400;
        Path dir = tmp.resolve("many-" + maxConcurrentForces + "-" + delayMicros);
        LongAdder returnedEarly = new LongAdder();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long forces;
        try (DurableStore store = DurableStore.open(dir, 32 * 1024,
                Duration.ofNanos(delayMicros * 1000L), maxConcurrentForces)) {
            store.start();
            store.append(new LogRecord(LogRecord.Type.CREATE_COLLECTION, "d", "c", new Document("idField", "_id")));
            store.awaitAppended();
            long forcesBefore = store.forces();
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                all.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < perThread; i++) {
                        store.requestStarted();
                        try {
                            long lsn = store.append(LogRecord.put("d", "c",
                                    new Document("_id", thread * perThread + i).append("pad", "x".repeat(100))));
                            store.awaitDurable(lsn);
                            if (store.durableLsn() < lsn) {
                                returnedEarly.increment();
                            }
                        } finally {
                            store.requestFinished();
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            forces = store.forces() - forcesBefore;
            // Compaction runs in the background: on a loaded machine the first one may still be
            // writing its snapshot when the writers are done (seen), so give it time to finish.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (store.compactions() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(store.compactions()).as("compactions while running").isPositive();
        } finally {
            pool.shutdownNow();
        }
        assertThat(returnedEarly.sum()).as("waits that returned before their record was durable").isZero();
        if (delayMicros > 0) {
            // siblings are always in flight here, so a waiter holds its force back for them
            assertThat(forces).as("forces for %d records of %d concurrent requesters", threads * perThread, threads)
                    .isLessThan(threads * perThread / 2);
        }
        try (DurableStore reopened = DurableStore.open(dir, DurableStore.DEFAULT_COMPACT_THRESHOLD)) {
            assertThat(reopened.recoveredState().documentCount()).isEqualTo(threads * perThread);
        }
    }

    /**
     * Callbacks ({@link DurableStore#whenDurable}, how replies wait) are told only once their record
     * is on disk, each once, and records appended while a force runs share the next one.
     */
    @Test
    void callbacks_areToldOnlyOnceTheirRecordIsDurable_andShareForces() throws Exception {
        int records = 200;
        try (DurableStore store = started(Duration.ZERO)) {
            CountDownLatch forcesAllowed = new CountDownLatch(1);
            store.beforeEachForce(HeldForces.until(forcesAllowed));
            long forcesBefore = store.forces();
            CountDownLatch told = new CountDownLatch(records);
            LongAdder early = new LongAdder();
            LongAdder failed = new LongAdder();
            LongAdder calls = new LongAdder();
            for (int i = 0; i < records; i++) {
                long lsn = store.append(LogRecord.put("d", "c", new Document("_id", i)));
                store.whenDurable(lsn, failure -> {
                    calls.increment();
                    if (failure != null) {
                        failed.increment();
                    }
                    if (!store.isDurable(lsn)) {
                        early.increment();
                    }
                    told.countDown();
                });
            }
            Thread.sleep(300);
            assertThat(calls.sum()).as("callbacks told while every force is held back").isZero();

            forcesAllowed.countDown();
            assertThat(told.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(100);
            assertThat(calls.sum()).as("calls of %d callbacks", records).isEqualTo(records);
            assertThat(early.sum()).as("callbacks told before their record was durable").isZero();
            assertThat(failed.sum()).isZero();
            // the first force started with the first record; all others wait for the second
            assertThat(store.forces() - forcesBefore).isLessThanOrEqualTo(2);
        }
    }

    /** The log writer holds its force back while a request is still being handled, and forces once it finishes. */
    @Test
    void theLogWriter_waitsForARequestStillBeingHandled_notForTheDelay() throws Exception {
        try (DurableStore store = started(LONG_DELAY)) {
            long forcesBefore = store.forces();
            CountDownLatch told = new CountDownLatch(2);
            store.requestStarted();
            store.requestStarted();
            long first = store.append(LogRecord.put("d", "c", new Document("_id", 1)));
            store.requestFinished();
            store.whenDurable(first, failure -> told.countDown());

            Thread.sleep(300);
            assertThat(store.isDurable(first)).as("forced while a sibling request was still being handled").isFalse();

            long second = store.append(LogRecord.put("d", "c", new Document("_id", 2)));
            store.requestFinished();
            store.whenDurable(second, failure -> told.countDown());

            assertThat(told.await(10, TimeUnit.SECONDS)).as("told well before the 30 s delay").isTrue();
            assertThat(store.forces() - forcesBefore).as("forces for two records of two requests").isEqualTo(1);
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
