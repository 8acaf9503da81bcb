package io.mongo2pc;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import com.mongodb.MongoCommandException;
import com.mongodb.ServerAddress;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A caller knows its transaction's id before anything can fail: it may give the id (running it
 * again is the same transaction), every exception carries it, and {@code awaitOutcome} tells how
 * it ended, finishing it if its owner is gone.
 */
class TransactionIdsTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final class Crash extends RuntimeException {
        Crash() {
            super("crash", null, false, false);
        }
    }

    /** Its owner's process dies right after the first operation took effect. */
    static final CrashHook CRASH_AFTER_FIRST_APPLY = (p, id) -> {
        if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0))) {
            throw new Crash();
        }
    };

    @Test
    void run_sameIdTwice_appliesOnceAndReturnsTheFirstOutcome() {
        Fixture f = new Fixture();
        TransactionManager tm = f.manager("app", Duration.ofSeconds(30), CrashHook.NONE);

        TransactionOutcome first = tm.run("pay-1", f.transfer(30L));
        TransactionOutcome second = tm.run("pay-1", f.transfer(30L));

        assertThat(first.state()).isEqualTo(TransactionState.DONE);
        assertThat(first.id()).isEqualTo("pay-1");
        assertThat(second).isEqualTo(first);
        assertThat(f.balance("A")).isEqualTo(70L);
        assertThat(f.balance("B")).isEqualTo(30L);
    }

    @Test
    void run_sameIdWithOtherOperations_isRefusedAndChangesNothing() {
        Fixture f = new Fixture();
        TransactionManager tm = f.manager("app", Duration.ofSeconds(30), CrashHook.NONE);
        tm.run("pay-2", f.transfer(30L));

        InvalidTransactionException refused = catchThrowableOfType(() -> tm.run("pay-2", f.transfer(40L)),
                InvalidTransactionException.class);

        assertThat(refused).hasMessageContaining("pay-2").hasMessageContaining("already used");
        assertThat(refused.transactionId()).isEqualTo("pay-2");
        assertThat(f.balance("A")).isEqualTo(70L);
    }

    @Test
    void run_retriedWithTheSameIdAfterItsOwnerCrashed_finishesTheFirstInsteadOfRunningAgain() {
        Fixture f = new Fixture();
        AtomicBoolean crash = new AtomicBoolean(true);
        TransactionManager tm = f.manager("app", Duration.ofMillis(300), (p, id) -> {
            if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0)) && crash.getAndSet(false)) {
                throw new Crash();
            }
        });
        assertThatThrownBy(() -> tm.run("pay-3", f.transfer(30L))).isInstanceOf(Crash.class);
        assertThat(f.balance("A")).as("debited by the crashed call").isEqualTo(70L);

        // the caller does not know how far it got: it runs the same id again
        TransactionOutcome retried = tm.run("pay-3", f.transfer(30L));

        assertThat(retried.state()).isEqualTo(TransactionState.DONE);
        assertThat(f.balance("A")).as("debited once").isEqualTo(70L);
        assertThat(f.balance("B")).isEqualTo(30L);
        assertThat(tm.inspect("pay-3").orElseThrow().epoch()).as("finished by a takeover").isEqualTo(2L);
    }

    @Test
    void awaitOutcome_ofATransactionWhoseOwnerCrashed_takesItOverAndFinishesIt() {
        Fixture f = new Fixture();
        TransactionManager owner = f.manager("owner", Duration.ofMillis(300), CRASH_AFTER_FIRST_APPLY);
        assertThatThrownBy(() -> owner.run("pay-4", f.transfer(30L))).isInstanceOf(Crash.class);
        TransactionManager other = f.manager("other", Duration.ofSeconds(30), CrashHook.NONE);

        TransactionOutcome outcome = other.awaitOutcome("pay-4", Duration.ofSeconds(10)).orElseThrow();

        assertThat(outcome.state()).isEqualTo(TransactionState.DONE);
        assertThat(f.balance("B")).isEqualTo(30L);
    }

    @Test
    void awaitOutcome_ofALiveOwnersTransaction_givesUpWithTheIdAndState() {
        Fixture f = new Fixture();
        TransactionManager owner = f.manager("owner", Duration.ofSeconds(30), CRASH_AFTER_FIRST_APPLY);
        assertThatThrownBy(() -> owner.run("pay-5", f.transfer(30L))).isInstanceOf(Crash.class);

        OutcomeUnknownException unknown = catchThrowableOfType(() -> owner.awaitOutcome("pay-5", Duration.ofMillis(200)),
                OutcomeUnknownException.class);

        assertThat(unknown.transactionId()).isEqualTo("pay-5");
        assertThat(unknown.lastKnownState()).isEqualTo(TransactionState.PENDING);
        assertThat(unknown).hasMessageContaining("lease until");
        mongo.expireLeases(f.db);
        assertThat(f.manager("other", Duration.ofSeconds(30), CrashHook.NONE).awaitOutcome("pay-5", Duration.ZERO))
                .hasValueSatisfying(o -> assertThat(o.isDone()).isTrue());
    }

    @Test
    void awaitOutcome_ofAnIdNeverWritten_isEmpty() {
        Fixture f = new Fixture();
        assertThat(f.manager("app", Duration.ofSeconds(30), CrashHook.NONE).awaitOutcome("never", Duration.ofMillis(100))).isEmpty();
    }

    @Test
    void databaseRefusal_duringAStep_throwsATransactionExceptionCarryingTheIdMadeForIt() {
        // A made id (no caller id): the exception still names the transaction, so its outcome can be read.
        Fixture f = new Fixture();
        TransactionManager tm = f.manager("app", Duration.ofMillis(300), (p, id) -> {
            if (p.equals(CrashPoint.after(CrashPoint.Step.APPLY, 0))) {
                throw new MongoCommandException(new BsonDocument("ok", new BsonInt32(0)).append("code", new BsonInt32(13))
                        .append("errmsg", new BsonString("not authorized")), new ServerAddress());
            }
        });

        TransactionException thrown = catchThrowableOfType(() -> tm.run(f.transfer(30L)), TransactionException.class);

        assertThat(thrown.transactionId()).as(thrown.getMessage()).isNotNull();
        assertThat(thrown.lastKnownState()).isEqualTo(TransactionState.PENDING);
        assertThat(thrown).hasMessageContaining("not authorized");
        TransactionManager other = f.manager("other", Duration.ofSeconds(30), CrashHook.NONE);
        assertThat(other.awaitOutcome(thrown.transactionId(), Duration.ofSeconds(10)))
                .hasValueSatisfying(o -> assertThat(o.isDone()).isTrue());
    }

    @Test
    void badInput_underACallersId_carriesTheIdAndWritesNothing() {
        Fixture f = new Fixture();
        TransactionManager tm = f.manager("app", Duration.ofSeconds(30), CrashHook.NONE);

        InvalidTransactionException refused = catchThrowableOfType(() -> tm.run("pay-6", List.of(
                Operation.increment(f.a, "balance", 0L, null))), InvalidTransactionException.class);

        assertThat(refused.transactionId()).isEqualTo("pay-6");
        assertThat(tm.inspect("pay-6")).isEmpty();
        assertThatThrownBy(() -> tm.run(new Document("$gt", ""), f.transfer(1L)))
                .isInstanceOf(InvalidTransactionException.class).hasMessageContaining("transaction id");
    }

    @Test
    void idThatIsAQueryOperator_isRefusedByEveryCallTakingAnId_beforeAnythingIsReadOrWritten() {
        Fixture f = new Fixture();
        TransactionManager tm = f.manager("app", Duration.ofSeconds(30), CrashHook.NONE);
        assertThat(tm.run("pay-1", f.transfer(1L)).isDone()).isTrue();
        Document operator = new Document("$gt", "");

        for (ThrowingCallable call : List.<ThrowingCallable>of(() -> tm.awaitOutcome(operator, Duration.ZERO),
                () -> tm.cancel(operator, "why"), () -> tm.inspect(operator), () -> tm.note(operator, "looked", "ops"))) {
            assertThatThrownBy(call).isInstanceOf(InvalidTransactionException.class)
                    .hasMessageStartingWith("transaction id: id must be a string, an integer or an ObjectId, got {\"$gt\": \"\"}");
        }
        assertThat(tm.inspect("pay-1")).hasValueSatisfying(v -> assertThat(v.isTerminal()).isTrue());
    }

    /** Accounts A (100) and B (0), and managers on them. */
    private static final class Fixture {
        final String db = mongo.database();
        final DocumentRef a = DocumentRef.of(db, "accounts", "A");
        final DocumentRef b = DocumentRef.of(db, "accounts", "B");

        Fixture() {
            mongo.client().getDatabase(db).getCollection("accounts").insertMany(List.of(
                    new Document("_id", "A").append("balance", 100L).append("pendingTransactions", List.of()),
                    new Document("_id", "B").append("balance", 0L).append("pendingTransactions", List.of())));
            mongo.invariants().expectTotal(db, 100L);
        }

        List<Operation> transfer(long amount) {
            return List.of(Operation.increment(a, "balance", -amount, new Document("balance", new Document("$gte", amount))),
                    Operation.increment(b, "balance", amount, null));
        }

        TransactionManager manager(String app, Duration lease, CrashHook hook) {
            return TestManagers.crashing(mongo.client(), db, app, hook).twoRoundCommit(false).finishInBackground(false).lease(lease).maxClockSkew(Duration.ofMillis(50)).build();
        }

        long balance(String id) {
            return mongo.client().getDatabase(db).getCollection("accounts").find(new Document("_id", id)).first().getLong("balance");
        }
    }
}
