package io.mongo2pc;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guarantee 2, the other side: a live owner whose transaction takes longer than its lease keeps
 * renewing it, so a recoverer polling all the while never takes it over.
 */
class LeaseRenewalTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void slowOwnerApplyingManyOperations_renewsItsLease_andIsNeverTakenOver() throws Exception {
        // given: 12 documents and an owner that needs ~250 ms per apply, ~3 s in all, with a 2 s lease
        // (renewed after a third of it: more than a second of slack for a loaded 2-core machine, where
        // a stamp older than the lease is a legitimate takeover; 600 ms once proved too little)
        Duration lease = Duration.ofSeconds(2);
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            mongo.client().getDatabase(mongo.database()).getCollection("counters")
                    .insertOne(new Document("_id", "c" + i).append("n", 0L).append("pendingTransactions", List.of()));
            ops.add(Operation.increment(DocumentRef.of(mongo.database(), "counters", "c" + i), "n", 1L, null));
        }
        TransactionManager owner = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.client()).database(mongo.database())
                .application("slow").lease(lease).maxClockSkew(Duration.ofMillis(100)).crashHook((point, id) -> {
                    if (point.step() == Step.APPLY && point.phase() == CrashPoint.Phase.BEFORE) {
                        sleep(250);
                    }
                }).build();
        TransactionManager recoverer = TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", mongo.newClient()).database(mongo.database())
                .application("recoverer").lease(lease).build();

        // a recoverer polls the whole time with the same lease
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger takenOver = new AtomicInteger();
        Thread poller = new Thread(() -> {
            while (running.get()) {
                // skipped counts the live owner's transaction as not stale: anything else is a takeover
                RecoveryReport report = recoverer.recover();
                takenOver.addAndGet(report.finished() + report.skipped() - report.notStale().size());
                sleep(10);
            }
        });
        poller.start();

        // when
        TransactionOutcome outcome;
        try {
            outcome = owner.run(ops);
        } finally {
            running.set(false);
            poller.join();
        }

        // then
        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(takenOver.get()).as("takeovers of a live owner").isZero();
        TransactionView view = owner.inspect(outcome.id()).orElseThrow();
        assertThat(view.epoch()).isEqualTo(1L);
        assertThat(view.application()).isEqualTo("slow");
        for (Document d : mongo.client().getDatabase(mongo.database()).getCollection("counters").find()) {
            assertThat(d.getLong("n")).isEqualTo(1L);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
