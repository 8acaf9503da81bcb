package io.mongo2pc.internal.tutorial;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The finisher's hand-over: batches, waiting for it, and closing it under callers that wait for room. */
class FinisherTest {

    @Test
    void itemsHandedOverWhileABatchRuns_goTogetherInTheNext_andAwaitIdleSeesThemDone() throws Exception {
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<List<Integer>> batches = new CopyOnWriteArrayList<>();
        Finisher<Integer> finisher = new Finisher<>("test-finisher", batch -> {
            batches.add(List.copyOf(batch));
            firstStarted.countDown();
            await(release);
        }, 16, 8, Duration.ZERO);

        assertThat(finisher.offer(1)).isTrue();
        assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
        for (int i = 2; i <= 5; i++) {
            assertThat(finisher.offer(i)).isTrue();
        }
        assertThat(finisher.awaitIdle(Duration.ofMillis(100))).as("not idle while a batch is held").isFalse();
        release.countDown();

        assertThat(finisher.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(batches).containsExactly(List.of(1), List.of(2, 3, 4, 5));
        assertThat(finisher.close(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void aRoundWaitsUpToItsLingerForMore_soItemsArrivingMeanwhileShareIt() throws Exception {
        List<List<Integer>> batches = new CopyOnWriteArrayList<>();
        Finisher<Integer> finisher = new Finisher<>("test-finisher", batch -> batches.add(List.copyOf(batch)), 16, 8,
                Duration.ofMillis(500));

        assertThat(finisher.offer(1)).isTrue();
        Thread.sleep(50);
        assertThat(finisher.offer(2)).isTrue();
        assertThat(finisher.offer(3)).isTrue();

        assertThat(finisher.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(batches).containsExactly(List.of(1, 2, 3));
        assertThat(finisher.close(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void close_refusesNewItems_andReleasesCallersWaitingForRoom_whoKeepTheirItem() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Finisher<Integer> finisher = new Finisher<>("test-finisher", batch -> {
            started.countDown();
            await(never);
        }, 1, 1, Duration.ZERO);
        assertThat(finisher.offer(1)).isTrue();          // taken by the thread, which then hangs
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(finisher.offer(2)).isTrue();          // fills the queue
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> finisher.offer(3));
        Thread.sleep(200);
        assertThat(waiting).as("a caller waits while the queue is full").isNotDone();

        assertThat(finisher.close(Duration.ofMillis(200))).as("work was left").isFalse();

        assertThat(waiting.get(5, TimeUnit.SECONDS)).as("the waiting caller is refused, so it keeps its item").isFalse();
        assertThat(finisher.offer(4)).isFalse();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
