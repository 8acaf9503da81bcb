package io.mongo2pc.bank;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.PruneOptions;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Guarantee 8: every write and every read the library sends states its write or read concern
 * (majority by default), never inheriting the client's weaker default. Checked on the wire with a
 * command listener on a client whose own defaults are w:1 and local.
 */
class ConcernsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify");
    private static final Set<String> READS = Set.of("find", "aggregate", "count", "distinct");

    @Test
    void everyCommandOfTransfersQueueRecoveryCancelAndPrune_statesMajorityConcerns() throws Exception {
        // given: a client that records what it sends
        List<BsonDocument> commands = new CopyOnWriteArrayList<>();
        CommandListener listener = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                commands.add(event.getCommand().clone());
            }
        };
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(mongo.uri()))
                .writeConcern(WriteConcern.W1).readConcern(ReadConcern.LOCAL) // weaker client defaults the library must not inherit
                .addCommandListener(listener).build())) {
            TransactionManager manager = Bank.configure(TransactionManager.builder().target("default", client)
                    .database(mongo.database()).lease(Duration.ofMillis(50))).build();
            Bank bank = new Bank(manager);
            bank.createAccount("A", 1000L);
            bank.createAccount("B", 1000L);
            mongo.invariants().expectTotal(mongo.database(), 2000L);

            // when: every kind of work the library does
            bank.transfer("A", "B", 100L);
            bank.transfer("A", "B", 5000L);
            bank.submit("B", "A", 50L);
            manager.claimAndRun();
            Object queued = bank.submit("B", "A", 10L);
            manager.cancel(queued, "operator");
            AtomicBoolean armed = new AtomicBoolean(true);
            TransactionManager crashing = Bank.configure(TransactionManager.builder().target("default", client)
                    .database(mongo.database()).lease(Duration.ofMillis(50)).crashHook((point, id) -> {
                        if (point.equals(CrashPoint.after(Step.APPLY, 0)) && armed.compareAndSet(true, false)) {
                            throw new IllegalStateException("killed");
                        }
                    })).build();
            assertThatThrownBy(() -> new Bank(crashing).transfer("A", "B", 1L)).hasMessage("killed");
            Thread.sleep(100);
            manager.recover();
            manager.counts();
            manager.oldestOpen();
            bank.verify(2000L);
            bank.list();
            manager.prune(Duration.ZERO, PruneOptions.builder().force(true).includeCanceled(true).build()); // stubs
            manager.prune(Duration.ZERO, PruneOptions.builder().force(true).includeCanceled(true).forgetIds(true).build());
        }

        // then
        assertThat(commands).isNotEmpty();
        for (BsonDocument command : commands) {
            String name = command.getFirstKey();
            if (WRITES.contains(name)) {
                assertThat(command.containsKey("writeConcern")).as("%s states a write concern: %s", name, command.toJson()).isTrue();
                assertThat(command.getDocument("writeConcern").get("w").toString()).as(command.toJson()).contains("majority");
            }
            if (READS.contains(name)) {
                assertThat(command.containsKey("readConcern")).as("%s states a read concern: %s", name, command.toJson()).isTrue();
                assertThat(command.getDocument("readConcern").getString("level").getValue()).as(command.toJson()).isEqualTo("majority");
            }
        }
    }
}
