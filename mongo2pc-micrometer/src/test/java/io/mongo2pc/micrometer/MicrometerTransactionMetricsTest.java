package io.mongo2pc.micrometer;

import io.mongo2pc.testing.TestManagers;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.TransactionResult;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MicrometerTransactionMetricsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void transfersCancelsAndRecovery_areCounted() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String db = mongo.database();
        TransactionManager manager = Bank.configure(TestManagers.builder(mongo.client(), db, "mongo2pc")
                .metrics(new MicrometerTransactionMetrics(registry))).build();
        Bank bank = new Bank(manager);
        bank.createAccount("A", 100L);
        bank.createAccount("B", 0L);
        mongo.invariants().expectTotal(db, 100L);

        bank.transfer("A", "B", 10L);
        bank.transfer("A", "B", 10L);
        bank.transfer("A", "B", 1_000L); // insufficient funds: canceled
        // a committed transfer is counted once done: by default the manager's finisher thread finishes it after the call
        assertThat(manager.awaitFinished(Duration.ofSeconds(30))).isTrue();

        // A transfer abandoned after its commit point, then recovered by a second instance.
        TransactionManager crashing = Bank.configure(TestManagers.builder(mongo.client(), db, "mongo2pc")
                .crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1))) {
                        throw new IllegalStateException("crash");
                    }
                })).build();
        assertThatThrownBy(() -> new Bank(crashing).transfer("A", "B", 5L)).hasMessage("crash");
        MicrometerTransactionMetrics recovererMetrics = new MicrometerTransactionMetrics(registry);
        TransactionManager recoverer = Bank.configure(TestManagers.builder(mongo.client(), db, "recoverer")
                .metrics(recovererMetrics)).build();
        recovererMetrics.bindRecoveryLag(recoverer);
        assertThat(registry.get("mongo2pc.recovery.lag").gauge().value()).isGreaterThanOrEqualTo(0.0);
        mongo.expireLeases(db);
        assertThat(registry.get("mongo2pc.recovery.lag").gauge().value()).as("lag of the abandoned transfer").isGreaterThan(1_000_000.0);
        recoverer.recover(Duration.ZERO);

        assertThat(registry.get("mongo2pc.transactions.started").counter().count()).isEqualTo(3.0);
        assertThat(registry.get("mongo2pc.transactions.committed").counter().count()).isEqualTo(3.0);
        assertThat(registry.get("mongo2pc.transactions.canceled").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("mongo2pc.takeovers").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("mongo2pc.transactions.recovered").tag("outcome", "done").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("mongo2pc.commit.latency").timer().count()).isEqualTo(3L);
        assertThat(registry.get("mongo2pc.recovery.lag").gauge().value()).isZero();
    }

    @Test
    void interactiveTransactions_attemptsAndConflictsByKind_areRecorded() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("counters").insertOne(new Document("_id", "c").append("n", 0L));
        DocumentRef counter = DocumentRef.of(db, "counters", "c");
        AtomicBoolean interfered = new AtomicBoolean();
        try (TransactionManager manager = TestManagers.builder(mongo.client(), db, "metrics")
                .metrics(new MicrometerTransactionMetrics(registry)).build()) {
            TransactionResult<Long> result = manager.transact(ctx -> {
                long n = ctx.get(counter).orElseThrow().getLong("n");
                if (interfered.compareAndSet(false, true)) {
                    // another transaction commits a change of what this attempt read: it loses, CHANGED
                    manager.transact(other -> other.update(counter, new Document("$inc", new Document("n", 10L))));
                }
                ctx.update(counter, new Document("$set", new Document("n", n + 1)));
                return n + 1;
            });

            assertThat(result.attempts()).isEqualTo(2);
            assertThat(result.value()).isEqualTo(11L);
        }
        assertThat(registry.get("mongo2pc.interactive.conflicts").tag("kind", "changed").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("mongo2pc.interactive.conflicts").tag("kind", "held").counter().count()).isZero();
        assertThat(registry.get("mongo2pc.interactive.attempts").summary().count()).as("two transactions ended").isEqualTo(2L);
        assertThat(registry.get("mongo2pc.interactive.attempts").summary().totalAmount()).as("1 + 2 attempts").isEqualTo(3.0);
    }
}
