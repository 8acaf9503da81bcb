package io.mongo2pc.embedded;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The process's cost readings: context switches keep counting the threads that ended. */
class ProcessCostTest {

    @Test
    void contextSwitches_ofThreadsThatEnded_stillCount_soReadingsNeverGoDown() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux's /proc/self/task says each thread's context switches");
        CountDownLatch seen = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                for (int j = 0; j < 50; j++) {
                    Thread.yield();
                    try {
                        Thread.sleep(1); // each sleep is a voluntary switch
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                try {
                    seen.await(); // alive until the reading below has seen their switches
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            threads.add(t);
        }
        Thread.sleep(300);
        ProcessCost before = ProcessCost.now();
        seen.countDown();
        for (Thread t : threads) {
            t.join();
        }

        ProcessCost after = ProcessCost.now();

        assertThat(before.contextSwitches()).isPositive();
        assertThat(after.since(before).contextSwitches()).as("the ended threads' switches are kept").isGreaterThanOrEqualTo(0);
    }
}
