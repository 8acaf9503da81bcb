package io.mongo2pc;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every way a transaction is refused ends as a canceled outcome with a {@link ReasonCode}, stored
 * beside the reason ({@code code}) so that any process reading the transaction gets it too.
 */
class ReasonCodeTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private String db;
    private DocumentRef a;
    private DocumentRef b;

    /** Accounts A (100) and B (0); a manager that waits 100 ms for busy documents, which carry one marker at most. */
    private TransactionManager manager() {
        db = mongo.database();
        a = DocumentRef.of(db, "accounts", "A");
        b = DocumentRef.of(db, "accounts", "B");
        mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()),
                new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
        return TestManagers.builder(mongo.client(), db, "codes").conflictTimeout(Duration.ofMillis(100)).maxMarkers(1).build();
    }

    @Test
    void debitRefusedByItsFundsCheck_isInsufficientFunds() {
        TransactionManager tm = manager();
        assertCanceledWith(tm, tm.run(List.of(Operation.increment(a, "balance", -500L, new Document("balance", new Document("$gte", 500L))),
                Operation.increment(b, "balance", 500L, null))), ReasonCode.INSUFFICIENT_FUNDS);
    }

    @Test
    void otherGuard_isGuardFailed() {
        TransactionManager tm = manager();
        assertCanceledWith(tm, tm.run(List.of(Operation.increment(a, "balance", -5L, new Document("balance", new Document("$gte", 500L))))),
                ReasonCode.GUARD_FAILED);
        assertCanceledWith(tm, tm.run(List.of(Operation.update(a, new Document("$set", new Document("frozen", true)),
                new Document("frozen", false)))), ReasonCode.GUARD_FAILED);
    }

    @Test
    void missingAndExistingDocuments() {
        TransactionManager tm = manager();
        assertCanceledWith(tm, tm.run(List.of(Operation.increment(DocumentRef.of(db, "accounts", "Z"), "balance", 1L, null))),
                ReasonCode.DOCUMENT_MISSING);
        assertCanceledWith(tm, tm.run(List.of(Operation.insert(a, new Document("balance", 1L)))), ReasonCode.DOCUMENT_EXISTS);
    }

    @Test
    void documentHeldByAnotherTransaction_isConflict_andFullOfMarkers_isTimedOut() {
        TransactionManager tm = manager();
        // a transaction stopped after its apply keeps its marker on A (maxMarkers 1)
        TransactionManager stopped = TransactionManager.builder().target("default", mongo.client()).database(db)
                .application("stopped").commitInsert(false).crashHook((p, id) -> {
                    if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0))) {
                        throw new IllegalStateException("stop");
                    }
                }).build();
        try {
            stopped.run(List.of(Operation.increment(a, "balance", 1L, null)));
        } catch (IllegalStateException expected) {
            // A carries its marker now
        }

        assertCanceledWith(tm, tm.run(List.of(Operation.delete(a, null))), ReasonCode.CONFLICT);
        assertCanceledWith(tm, tm.run(List.of(Operation.increment(a, "balance", 1L, null))), ReasonCode.TIMED_OUT);
        mongo.expireLeases(db);
        tm.recover(Duration.ZERO);
    }

    private static void assertCanceledWith(TransactionManager tm, TransactionOutcome outcome, ReasonCode code) {
        assertThat(outcome.state()).as(outcome.reason()).isEqualTo(TransactionState.CANCELED);
        assertThat(outcome.reasonCode()).as(outcome.reason()).isEqualTo(code);
        TransactionView stored = tm.inspect(outcome.id()).orElseThrow();
        assertThat(stored.reasonCode()).isEqualTo(code);
        assertThat(stored.document().getString("code")).isEqualTo(code.name());
        assertThat(stored.reason()).isEqualTo(outcome.reason());
    }
}
