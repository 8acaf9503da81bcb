package io.mongo2pc.spring;

import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.mongo2pc.ConflictKind;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.Operation;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.spring.TransactionalApp.Counter;
import io.mongo2pc.spring.TransactionalApp.Counters;
import io.mongo2pc.spring.TransactionalApp.Deposited;
import io.mongo2pc.spring.TransactionalApp.Receipts;
import io.mongo2pc.spring.TransactionalApp.StoppedObservations;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.ConcurrencyFailureException;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Conflicts between {@code @Transactional} methods on one document: the loser's method runs again
 * and both count; conflicts that outlast the method's timeout become Spring's
 * {@code ConcurrencyFailureException}; what each run leaves in events, observations and the
 * core's meters.
 */
class TransactionalConflictTest extends TransactionalTestBase {
    private final ExecutorService threads = Executors.newFixedThreadPool(2);

    @Autowired Counters counters;
    @Autowired Receipts receipts;
    @Autowired StoppedObservations observations;
    @Autowired MeterRegistry meters;

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    @Test
    void twoThreadsOneDocument_theLoserRunsAgain_bothIncrementsCount_eventsOncePerCommit() throws Exception {
        String id = unique("counter");
        ops.insert(new Counter(id, 0));
        CyclicBarrier firstRuns = new CyclicBarrier(2); // both first runs read 0 before either writes
        int runsBefore = counters.runs().size();
        DistributionSummary attempts = meters.get("mongo2pc.interactive.attempts").summary();
        long transactionsBefore = attempts.count();
        double bodyRunsBefore = attempts.totalAmount();
        double conflictsBefore = conflicts();

        Future<Long> a = threads.submit(() -> counters.increment(id, firstRuns));
        Future<Long> b = threads.submit(() -> counters.increment(id, firstRuns));

        assertThat(List.of(a.get(60, TimeUnit.SECONDS), b.get(60, TimeUnit.SECONDS))).containsExactlyInAnyOrder(1L, 2L);
        assertThat(ops.findById(id, Counter.class)).get().extracting(Counter::value).isEqualTo(2L);
        List<Integer> runs = counters.runs().subList(runsBefore, counters.runs().size());
        assertThat(runs).as("attempt of each run").containsExactlyInAnyOrder(1, 1, 2);
        assertThat(receipts.committed().stream().filter(d -> d.wallet().equals(id)))
                .as("after-commit events: one per committed transaction").hasSize(2);
        assertThat(receipts.rolledBack().stream().filter(d -> d.wallet().equals(id)))
                .as("after-rollback events: the run that lost").containsExactly(new Deposited(id, 1));
        assertAttemptsObserved(id);
        // the core's meters: runs per transaction, conflicts by kind
        assertThat(attempts.count() - transactionsBefore).as("transactions measured").isEqualTo(2);
        assertThat(attempts.totalAmount() - bodyRunsBefore).as("runs of their methods").isEqualTo(3.0);
        assertThat(conflicts() - conflictsBefore).as("runs that lost a conflict").isEqualTo(1.0);
    }

    private double conflicts() {
        return meters.find("mongo2pc.interactive.conflicts").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
    }

    /** One observation per run, each a child of its transaction's, the lost one marked so. */
    private void assertAttemptsObserved(String counterId) {
        List<Observation.Context> attempts = observations.named(TransactionSpans.ATTEMPT);
        Map<String, List<Observation.Context>> byTransaction = attempts.stream()
                .collect(Collectors.groupingBy(c -> c.getHighCardinalityKeyValue(TransactionSpans.ID).getValue()));
        List<Observation.Context> transactions = observations.named(TransactionSpans.TRANSACTION).stream()
                .filter(t -> t.getLowCardinalityKeyValue(TransactionSpans.NAME_KEY).getValue().endsWith("Counters.increment"))
                .toList();
        Function<Observation.Context, List<Observation.Context>> runsOf = t ->
                byTransaction.getOrDefault(t.getHighCardinalityKeyValue(TransactionSpans.ID).getValue(), List.of());
        Observation.Context twice = transactions.stream().filter(t -> runsOf.apply(t).size() == 2).reduce((x, y) -> y)
                .orElseThrow(() -> new AssertionError("no transaction observed with two runs among " + transactions));
        assertThat(twice.getLowCardinalityKeyValue(TransactionSpans.OUTCOME)).isEqualTo(KeyValue.of(TransactionSpans.OUTCOME, "committed"));
        List<Observation.Context> itsRuns = runsOf.apply(twice);
        assertThat(itsRuns).allSatisfy(run -> assertThat(run.getParentObservation()).isNotNull()
                .extracting(parent -> parent.getContextView()).isSameAs(twice));
        assertThat(itsRuns).extracting(run -> run.getLowCardinalityKeyValue(TransactionSpans.OUTCOME).getValue())
                .containsExactly("conflict", "committed");
        assertThat(itsRuns).extracting(run -> run.getHighCardinalityKeyValue(TransactionSpans.ATTEMPT_NUMBER).getValue())
                .containsExactly("1", "2");
    }

    @Test
    void conflictsPastTheTimeout_throwConcurrencyFailureException_withIdAttemptsAndTheHolder() throws Exception {
        String id = unique("held");
        ops.insert(new Counter(id, 5));
        DocumentRef held = DocumentRef.of(DATABASE, ops.collectionName(Counter.class), id);
        String holderId = unique("holder");
        // the insert's own lock released (after its commit point, in the background), so that the
        // other process's transaction, stopped right after its write, has locked the document
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
        try (StoppedTransaction<TransactionOutcome> other = new StoppedTransaction<>(client, DATABASE, holderId, manager ->
                manager.run(holderId, List.of(Operation.update(held, new Document("$set", new Document("note", "held")), null))))) {

            Document before = client.getDatabase(DATABASE).getCollection("counters").find(new Document("_id", id)).first();
            Throwable thrown = catchThrowable(() -> counters.incrementWithin1s(id));

            assertThat(thrown).as("the document before: %s", before)
                    .isInstanceOf(ConcurrencyFailureException.class)
                    .isInstanceOfSatisfying(Mongo2pcConflictException.class, e -> {
                        assertThat(e.transactionId()).isNotNull();
                        assertThat(e.attempts()).isPositive();
                        assertThat(e.conflictKind()).isEqualTo(ConflictKind.HELD);
                        assertThat(e.conflictDocument()).isEqualTo(held);
                        assertThat(e.conflictingTransaction()).isEqualTo(holderId);
                        assertThat(e.getMessage()).contains(String.valueOf(e.transactionId()))
                                .as("@Transactional(timeout = 1)").contains("within 1000ms");
                    });

            assertThat(other.release().isCommitted()).isTrue();
        }
        assertThat(ops.findById(id, Counter.class)).get().extracting(Counter::value).as("nothing of the method").isEqualTo(5L);
    }
}
