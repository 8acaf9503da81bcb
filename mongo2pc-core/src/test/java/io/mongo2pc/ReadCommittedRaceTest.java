package io.mongo2pc;

import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.spi.CrashPoint;
import com.mongodb.client.MongoClient;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** readCommitted while the transactions a document names finish and are removed. */
class ReadCommittedRaceTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Stop extends RuntimeException {
        Stop() {
            super("stop after the commit point", null, false, false);
        }
    }

    private DocumentRef a;
    private DocumentRef b;

    /**
     * Accounts A = 100 and B = 0, and T (30 from A to B) committed under {@code rules} by an owner that
     * stopped right after its commit point, leaving its markers; then {@code read} through a proxy that,
     * just before the reader first looks a transaction up, has recovery finish T and prune remove it.
     * Returns what {@code read} returned.
     */
    private <T> T readWhileTIsFinishedAndPruned(UnaryOperator<TransactionManagerBuilder> rules,
                                                Function<TransactionManager, T> read) throws Exception {
        String db = mongo.database();
        mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        a = DocumentRef.of(db, "accounts", "A");
        b = DocumentRef.of(db, "accounts", "B");
        AtomicBoolean stop = new AtomicBoolean(true);
        TransactionManager writer = rules.apply(TestManagers.builder(mongo.client(), db, "writer")).finishInBackground(false)
                .crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.COMMIT, -1)) && stop.getAndSet(false)) {
                        throw new Stop();
                    }
                }).build();
        assertThatThrownBy(() -> writer.run(List.of(Operation.increment(a, "balance", -30L, null),
                Operation.increment(b, "balance", 30L, null)))).isInstanceOf(Stop.class);
        TransactionManager finisher = rules.apply(TestManagers.builder(mongo.newClient(), db, "finisher")).finishInBackground(false).build();
        AtomicLong pruned = new AtomicLong();
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient()) {
            TransactionManager reader = rules.apply(TestManagers.builder(viaProxy, db, "reader")).finishInBackground(false).build();
            proxy.runBefore(request -> request.contains("find") && request.contains("transactions")
                    && !request.contains("transactions_clock"), () -> {
                mongo.expireLeases(db);
                finisher.recover(Duration.ZERO);
                pruned.set(finisher.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned());
            });
            T result = read.apply(reader);
            assertThat(pruned).as("T was finished and pruned while the reader read").hasValue(1);
            return result;
        }
    }

    @Test
    void readCommitted_transactionFinishedAndPrunedBetweenItsReads_readsTheDocumentAgain() throws Exception {
        // Regression (found in review): the reader read B with T's marker, T was finished and pruned
        // before the reader looked it up, and the reader refused B as naming an unknown transaction.
        Document view = readWhileTIsFinishedAndPruned(rules -> rules.twoRoundCommit(false), reader -> reader.readCommitted(b).orElseThrow());

        assertThat(view.get("balance")).isEqualTo(30L);
    }

    @Test
    void readCommittedList_committedTransactionFinishedAndPrunedBeforeItsStateIsRead_showsItsEffect() throws Exception {
        // Regression: a cut read A and B twice with T's markers (T committed, its credit not released yet);
        // before the reader looked T up, T was finished and pruned, and the reader took a transaction it
        // could not find for one not committed: it showed A and B as before T, a move T never made back.
        List<Optional<Document>> views = readWhileTIsFinishedAndPruned(UnaryOperator.identity(), reader -> reader.readCommitted(List.of(a, b)));

        assertThat(views.get(0).orElseThrow().get("balance")).as("A").isEqualTo(70L);
        assertThat(views.get(1).orElseThrow().get("balance")).as("B").isEqualTo(30L);
    }
}
