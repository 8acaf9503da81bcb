package io.mongo2pc.micrometer;

import io.mongo2pc.testing.TestManagers;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TransactionObservationsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private TransactionObservations observations;

    private TransactionManager tracedManager(TestObservationRegistry registry, String application) {
        observations = new TransactionObservations(registry);
        TransactionManager manager = Bank.configure(TestManagers.builder(mongo.client(), mongo.database(), application)
                .crashHook(observations)).build();
        observations.bind(manager);
        return manager;
    }

    @Test
    void transfer_isOneObservation_withItsCommitPoint_outcome_andParent() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        TransactionManager manager = tracedManager(registry, "app");
        Bank bank = new Bank(manager);
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);
        mongo.invariants().expectTotal(mongo.database(), 100L);
        Observation request = Observation.start("http.request", registry);

        try (Observation.Scope scope = request.openScope()) {
            bank.transfer("t-1", "A", "B", 10L);
        }
        request.stop();
        // the observation ends at done: by default the manager's finisher thread gets there after the call returns
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(TransactionObservations.NAME, 1)
                .hasObservationWithNameEqualTo(TransactionObservations.NAME).that()
                .hasBeenStarted().hasBeenStopped()
                .hasHighCardinalityKeyValue("mongo2pc.transaction.id", "t-1")
                .hasHighCardinalityKeyValue("mongo2pc.operations", "2")
                .hasLowCardinalityKeyValue("mongo2pc.state", "done")
                .hasLowCardinalityKeyValue("mongo2pc.outcome", "committed")
                .hasLowCardinalityKeyValue("mongo2pc.reason.code", "none")
                .hasParentObservationEqualTo(request);
        assertThat(registry).hasObservationWithNameEqualTo(TransactionObservations.NAME).that()
                .hasEvent("mongo2pc.commit-point").doesNotHaveEvent("mongo2pc.takeover");
    }

    @Test
    void retriedTransactionId_leavesNoSecondObservationOpen() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        TransactionManager manager = tracedManager(registry, "app");
        Bank bank = new Bank(manager);
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);
        bank.transfer("t-1", "A", "B", 10L);
        // Its observation ended at done before the retry: the retry's commit insert meets t-1's document.
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();
        assertThat(observations.following()).isZero();

        bank.transfer("t-1", "A", "B", 10L); // a caller's retry: the same transaction, nothing written again
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();

        assertThat(observations.following()).as("observations left open").isZero();
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo(TransactionObservations.NAME, 1);
    }

    @Test
    void canceledTransfer_carriesItsReasonCode_andNoCommitPoint() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        Bank bank = new Bank(tracedManager(registry, "app"));
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);

        bank.transfer("t-poor", "A", "B", 1_000L);

        assertThat(registry).hasSingleObservationThat()
                .hasNameEqualTo(TransactionObservations.NAME).hasBeenStopped()
                .hasHighCardinalityKeyValue("mongo2pc.transaction.id", "t-poor")
                .hasHighCardinalityKeyValue("mongo2pc.operations", "2")
                .hasLowCardinalityKeyValue("mongo2pc.state", "canceled")
                .hasLowCardinalityKeyValue("mongo2pc.outcome", "canceled")
                .hasLowCardinalityKeyValue("mongo2pc.reason.code", "INSUFFICIENT_FUNDS")
                .doesNotHaveEvent("mongo2pc.commit-point");
    }

    @Test
    void takeover_isAnEvent_ofTheRecoverersObservation_andTheCrashedOneEndsUnfinished() {
        String db = mongo.database();
        TestObservationRegistry crashedRegistry = TestObservationRegistry.create();
        TransactionObservations crashedObservations = new TransactionObservations(crashedRegistry, (point, id) -> {
            if (point.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                throw new IllegalStateException("crash");
            }
        }, Duration.ofMinutes(1));
        TransactionManager crashing = Bank.configure(TestManagers.builder(mongo.client(), db, "mongo2pc")
                .crashHook(crashedObservations)).build();
        Bank bank = new Bank(crashing);
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);
        mongo.invariants().expectTotal(db, 100L);
        assertThatThrownBy(() -> bank.transfer("t-crash", "A", "B", 5L)).hasMessage("crash");
        assertThat(crashedObservations.following()).isEqualTo(1);
        crashedObservations.close();
        assertThat(crashedRegistry).hasSingleObservationThat().hasBeenStopped()
                .hasLowCardinalityKeyValue("mongo2pc.outcome", "unfinished")
                .hasLowCardinalityKeyValue("mongo2pc.state", "applied")
                .hasEvent("mongo2pc.commit-point");

        TestObservationRegistry registry = TestObservationRegistry.create();
        TransactionManager recoverer = tracedManager(registry, "recoverer");
        mongo.expireLeases(db);
        assertThat(recoverer.recover(Duration.ZERO).rolledForward()).isEqualTo(1);

        assertThat(registry).hasSingleObservationThat().hasBeenStopped()
                .hasHighCardinalityKeyValue("mongo2pc.transaction.id", "t-crash")
                .hasLowCardinalityKeyValue("mongo2pc.outcome", "committed")
                .hasLowCardinalityKeyValue("mongo2pc.state", "done")
                .hasEvent("mongo2pc.takeover");
    }
}
