package io.mongo2pc.spring;

import com.mongodb.client.MongoClient;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Another process's transaction, stopped right after its first write to a document (its lock on
 * it, an interactive update's change in place), until {@link #release()}: a test then looks at what
 * the application sees meanwhile. The document must be free when it starts (a transaction that
 * wrote it finished, not only committed): a write refused by another's lock is stopped all the
 * same, holding nothing. Closing it lets the transaction finish (also when the test failed), so no
 * lock stays behind.
 */
final class StoppedTransaction<T> implements AutoCloseable {
    private final TransactionManager manager;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private final CountDownLatch taken = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final Future<T> running;

    /** Starts {@code work} on a manager of its own, and returns once transaction {@code id} has taken its document. */
    StoppedTransaction(MongoClient client, String database, String id, Function<TransactionManager, T> work)
            throws InterruptedException {
        this.manager = TestManagers.builder(client, database, "other-process").crashHook((point, tx) -> {
            if (id.equals(tx) && point.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0))) {
                taken.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }).build();
        Callable<T> call = () -> work.apply(manager);
        this.running = thread.submit(call);
        assertThat(taken.await(30, TimeUnit.SECONDS)).as("transaction " + id + " took its document").isTrue();
    }

    /** Lets the transaction go on; what its work returned, once finished. */
    T release() throws Exception {
        release.countDown();
        T result = running.get(60, TimeUnit.SECONDS);
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
        return result;
    }

    @Override
    public void close() throws Exception {
        release.countDown();
        try {
            running.get(60, TimeUnit.SECONDS);
            manager.awaitFinished(Duration.ofSeconds(30));
        } finally {
            manager.close();
            thread.shutdownNow();
        }
    }
}
