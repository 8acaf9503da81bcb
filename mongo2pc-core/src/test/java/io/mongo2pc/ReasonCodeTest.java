package io.mongo2pc;

import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

    /** {@link #manager()} by the two-round commit (the default) or by the tutorial's rules. */
    private TransactionManager manager(boolean twoRound) {
        manager();
        return TestManagers.builder(mongo.client(), db, "codes").conflictTimeout(Duration.ofMillis(100)).maxMarkers(1)
                .twoRoundCommit(twoRound).build();
    }

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
        assertCanceledWith(tm, tm.run(List.of(Operation.increment(a, "balance", -500L, new Document("balance", new Document("$gte", 500L)))
                .with(Operation.Flag.DEBIT), Operation.increment(b, "balance", 500L, null))), ReasonCode.INSUFFICIENT_FUNDS);
    }

    @ParameterizedTest(name = "twoRoundCommit {0}")
    @ValueSource(booleans = {true, false})
    void debitRefused_outcomeNamesTheOperation_andSaysWhatTheAccountHasAndTheDebitNeeds(boolean twoRound) {
        TransactionManager tm = manager(twoRound);

        TransactionOutcome outcome = tm.run(List.of(Operation.increment(b, "balance", 500L, null),
                Operation.increment(a, "balance", -500L, new Document("balance", new Document("$gte", 500L))).with(Operation.Flag.DEBIT)));

        assertCanceledWith(tm, outcome, ReasonCode.INSUFFICIENT_FUNDS);
        assertThat(outcome.reason()).isEqualTo("A has balance 100, the debit needs 500");
        assertThat(outcome.failedOperation()).isEqualTo(new TransactionOutcome.FailedOperation(1, a));
    }

    @ParameterizedTest(name = "twoRoundCommit {0}")
    @ValueSource(booleans = {true, false})
    void stockGuard_isGuardFailed_notInsufficientFunds_withTheGuardAndTheStoredValueShown(boolean twoRound) {
        TransactionManager tm = manager(twoRound);
        DocumentRef widget = DocumentRef.of(db, "stock", "widget");
        mongo.client().getDatabase(db).getCollection("stock").insertOne(new Document("_id", "widget").append("qty", 3L));

        TransactionOutcome outcome = tm.run(List.of(Operation.increment(b, "balance", 5L, null),
                Operation.increment(widget, "qty", -5L, new Document("qty", new Document("$gte", 5L)))));

        assertCanceledWith(tm, outcome, ReasonCode.GUARD_FAILED);
        assertThat(outcome.reason()).isEqualTo("guard {\"qty\": {\"$gte\": 5}} does not hold on " + widget + ": qty is 3");
        assertThat(outcome.failedOperation()).isEqualTo(new TransactionOutcome.FailedOperation(1, widget));
        assertThat(mongo.client().getDatabase(db).getCollection("stock").find().first()).containsEntry("qty", 3L);
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
        assertThat(stored.failedOperation()).isEqualTo(outcome.failedOperation());
        assertThat(stored.outcome()).isEqualTo(outcome);
    }
}
