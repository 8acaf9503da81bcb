package io.mongo2pc.sweeps;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.LeaseLostException;
import io.mongo2pc.TransactionException;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.testing.LibraryFields;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Transfers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Guarantee 3: an owner paused past its lease (GC, SIGSTOP) that resumes after another process
 * took its transaction over changes nothing. The pause is simulated inside the crash hook, right
 * before one of the owner's writes: while it "sleeps", another manager takes over and finishes.
 * Here a transfer is two guarded increments stored with the transaction; the bank's tests run the
 * same on transfers in the tutorial's shape (subclasses set the managers' settings and the transfer).
 */
public class FencingTest {
    @RegisterExtension
    protected static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    static final Duration LEASE = Duration.ofMillis(150);

    TransactionManager other;
    MongoCollection<Document> accounts;

    @BeforeEach
    void setUp() {
        other = manager("other", CrashHook.NONE);
        accounts = mongo.client().getDatabase(mongo.database()).getCollection("accounts");
        createAccount("A", 1000L);
        createAccount("B", 1000L);
        mongo.invariants().expectTotal(mongo.database(), 2000L);
    }

    private void createAccount(String id, long balance) {
        Transfers.createAccount(mongo.client().getDatabase(mongo.database()), id, balance);
    }

    private TransactionManager manager(String application, CrashHook hook) {
        return configure(TestManagers.builder(mongo.client(), mongo.database(), application).lease(LEASE).crashHook(hook)
                .twoRoundCommit(false).finishInBackground(false)).build(); // the tutorial's rules, finished inline
    }

    /** The settings of every manager of the test (the bank's codec). */
    protected TransactionManagerBuilder configure(TransactionManagerBuilder builder) {
        return builder;
    }

    /** Moves {@code amount} from {@code source} to {@code destination} on {@code manager} ({@link Transfers#of}). */
    protected TransactionOutcome transfer(TransactionManager manager, String source, String destination, long amount) {
        return manager.run(Transfers.of(mongo.database(), source, destination, amount));
    }

    /** Pauses the owner once at {@code point} past its lease, and runs {@code meanwhile} during the pause. */
    private static CrashHook pauseAt(CrashPoint point, java.util.function.Consumer<Object> meanwhile) {
        AtomicBoolean armed = new AtomicBoolean(true);
        return (reached, id) -> {
            if (reached.equals(point) && armed.compareAndSet(true, false)) {
                sleep(LEASE.multipliedBy(2));
                meanwhile.accept(id);
            }
        };
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private long balance(String id) {
        return accounts.find(new Document("_id", id)).first().getLong("balance");
    }

    private Document onlyTransaction() {
        return mongo.transactions(other.settings().database()).find().first();
    }

    @Test
    void pausedOwner_resumingAfterOperatorCanceled_appliesNothing() {
        // given: the owner debited A, then paused before crediting B; meanwhile an operator canceled it
        TransactionManager owner = manager("owner", pauseAt(CrashPoint.before(Step.APPLY, 1), id -> other.cancel(id, "operator")));

        // when: the owner resumes
        assertThatThrownBy(() -> transfer(owner, "A", "B", 100L)).isInstanceOf(LeaseLostException.class);

        // then: canceled, and the late credit of B did not happen
        assertThat(onlyTransaction().getString("state")).isEqualTo("canceled");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("B")).as("B credited by a fenced-off owner").isEqualTo(1000L);
    }

    @Test
    void pausedOwner_resumingAfterRecoveryRolledForward_appliesNothingTwice() {
        // given: the owner paused before debiting A; meanwhile recovery took over and finished the transfer
        TransactionManager owner = manager("owner", pauseAt(CrashPoint.before(Step.APPLY, 0), id -> other.recover()));

        // when
        assertThatThrownBy(() -> transfer(owner, "A", "B", 100L)).isInstanceOf(LeaseLostException.class);

        // then: done once, not debited twice
        assertThat(onlyTransaction().getString("state")).isEqualTo("done");
        assertThat(balance("A")).as("A debited by a fenced-off owner").isEqualTo(900L);
        assertThat(balance("B")).isEqualTo(1100L);
    }

    /**
     * Regression: a late apply of an owner paused past its lease matched again once the new owner
     * had removed the marker (B credited after a cancel, A debited twice after a roll-forward).
     * The server refuses it by the owner's deadline; nothing is left on the account to remember
     * it, so nothing needs cleaning and pruning the transaction cannot re-open the hole.
     */
    @Test
    void lateApplyOfOwnerPausedPastLease_isRefusedByItsDeadline_andLeavesNothingBehind() {
        TransactionManager owner = manager("owner", pauseAt(CrashPoint.before(Step.APPLY, 0), id -> other.recover()));
        assertThatThrownBy(() -> transfer(owner, "A", "B", 100L)).isInstanceOf(LeaseLostException.class);
        assertThat(accounts.find(new Document("_id", "A")).first().keySet()).filteredOn(k -> !k.equals(LibraryFields.VERSION))
                .containsExactlyInAnyOrder("_id", "balance", "pendingTransactions");

        // when
        long pruned = other.prune(Duration.ZERO, TestManagers.FORGET_NOW).pruned();

        // then
        assertThat(pruned).isEqualTo(1);
        assertThat(mongo.transactions(other.settings().database()).countDocuments()).isZero();
        assertThat(balance("A")).isEqualTo(900L);
    }

    @Test
    void pausedOwner_resumingAfterTakeover_cannotMoveTheStateUnderTheNewOwner() {
        // given: the owner applied both operations and paused before the commit point; meanwhile another
        // process took the transaction over (epoch 2) and stopped right after, leaving it pending
        AtomicBoolean crashTakeover = new AtomicBoolean(true);
        TransactionManager taker = manager("taker", (point, id) -> {
            if (point.equals(CrashPoint.after(Step.TAKEOVER, -1)) && crashTakeover.compareAndSet(true, false)) {
                throw new IllegalStateException("taker stops after the takeover");
            }
        });
        TransactionManager owner = manager("owner", pauseAt(CrashPoint.before(Step.COMMIT, -1), id -> {
            assertThatThrownBy(taker::recover).hasMessageContaining("taker stops");
        }));

        // when: the owner resumes and tries to commit
        assertThatThrownBy(() -> transfer(owner, "A", "B", 100L)).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("epoch 1");

        // then: still pending under the new owner's epoch; recovery then finishes it exactly once
        Document tx = onlyTransaction();
        assertThat(tx.getString("state")).isEqualTo("pending");
        assertThat(tx.getLong("epoch")).isEqualTo(2L);
        sleep(LEASE.multipliedBy(2));
        assertThat(other.recover().rolledForward()).isEqualTo(1);
        assertThat(balance("A")).isEqualTo(900L);
        assertThat(balance("B")).isEqualTo(1100L);
    }

    @Test
    void pausedCanceler_resumingAfterTheCancelFinished_changesNothing() {
        // given: an owner refused by a guard began canceling and paused before its undo; meanwhile
        // another process finished the cancel
        createAccount("RICH", Long.MAX_VALUE);
        mongo.invariants().expectTotal(mongo.database(), new java.math.BigDecimal(Long.MAX_VALUE).add(java.math.BigDecimal.valueOf(2000)));
        TransactionManager owner = manager("owner", pauseAt(CrashPoint.before(Step.UNDO, 1), id -> other.recover()));

        // when
        assertThatThrownBy(() -> transfer(owner, "A", "RICH", 100L)).isInstanceOf(TransactionException.class);

        // then: A refunded exactly once
        assertThat(onlyTransaction().getString("state")).isEqualTo("canceled");
        assertThat(balance("A")).isEqualTo(1000L);
        assertThat(balance("RICH")).isEqualTo(Long.MAX_VALUE);
    }
}
