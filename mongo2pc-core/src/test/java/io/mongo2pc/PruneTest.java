package io.mongo2pc;

import com.mongodb.client.MongoCollection;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.bson.Document;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link TransactionManager#prune(Duration, PruneOptions)}: the age it refuses unless forced, the
 * canceled transactions it keeps unless asked, its dry run, and the stub it leaves, which keeps a
 * caller's id from running again.
 */
class PruneTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private static final PruneOptions FORCED = PruneOptions.builder().force(true).build();

    private DocumentRef a;
    private DocumentRef b;

    @BeforeEach
    void accounts() {
        a = account("A", 100L);
        b = account("B", 0L);
    }

    private TransactionManager manager(boolean twoRound) {
        return TestManagers.builder(mongo.client(), mongo.database(), "app").finishInBackground(false).twoRoundCommit(twoRound).build();
    }

    private DocumentRef account(String id, long balance) {
        mongo.client().getDatabase(mongo.database()).getCollection("accounts")
                .insertOne(new Document("_id", id).append("balance", balance).append("pendingTransactions", List.of()));
        return DocumentRef.of(mongo.database(), "accounts", id);
    }

    private static List<Operation> transfer(DocumentRef from, DocumentRef to, long amount) {
        return List.of(Operation.increment(from, "balance", -amount, new Document("balance", new Document("$gte", amount))),
                Operation.increment(to, "balance", amount, null));
    }

    private MongoCollection<Document> transactions() {
        return mongo.transactions(mongo.database());
    }

    private long balance(TransactionManager tm, DocumentRef ref) {
        return ((Number) tm.readCommitted(ref).orElseThrow().get("balance")).longValue();
    }

    @Test
    void prune_belowTheLeasePlusTheSkewMargin_isRefusedUnlessForced() {
        // given: a transaction done just now; the manager's lease 30s, skew margin 1s
        TransactionManager tm = manager(true);
        tm.run(transfer(a, b, 10L));

        // when / then: younger than 31s is refused, nothing written; forced, it is pruned
        assertThatThrownBy(() -> tm.prune(Duration.ZERO)).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("prune refused an age of 0s").hasMessageContaining("31s")
                .hasMessageContaining("lease").hasMessageContaining("force");
        assertThatThrownBy(() -> tm.prune(Duration.ofSeconds(30), PruneOptions.builder().dryRun(true).build()))
                .isInstanceOf(InvalidTransactionException.class);
        assertThat(transactions().find(new Document("state", "done")).first()).doesNotContainKey("pruned");
        assertThat(tm.prune(Duration.ofSeconds(31))).as("not old enough yet").isZero();
        PruneResult forced = tm.prune(Duration.ZERO, FORCED);
        assertThat(forced.pruned()).isEqualTo(1L);
        assertThat(forced.minimumAge()).isEqualTo(Duration.ofSeconds(31));
        assertThatThrownBy(() -> tm.prune(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("zero or more");
    }

    @Test
    void prune_anOwnersLongerLease_raisesTheAgeItRefuses() {
        // given: a transaction done an hour ago by an owner whose lease is 2 minutes
        TransactionManager longLease = TestManagers.builder(mongo.client(), mongo.database(), "long").finishInBackground(false)
                .lease(Duration.ofMinutes(2)).build();
        longLease.run(transfer(a, b, 10L));
        transactions().updateMany(new Document(), new Document("$set", new Document("lastModified", Date.from(Instant.now().minusSeconds(3600)))));
        TransactionManager tm = manager(true); // lease 30s

        // when / then: 40s is refused (that owner's 2m and the 1s margin), 3m prunes it
        assertThatThrownBy(() -> tm.prune(Duration.ofSeconds(40))).isInstanceOf(InvalidTransactionException.class)
                .hasMessageContaining("121s");
        assertThat(tm.prune(Duration.ofMinutes(3), PruneOptions.builder().dryRun(true).build()).minimumAge())
                .isEqualTo(Duration.ofSeconds(121));
        assertThat(tm.prune(Duration.ofMinutes(3))).isEqualTo(1L);
    }

    @Test
    void prune_keepsCanceledTransactionsUnlessIncluded_andCountsByStateInADryRun() {
        // given: one transfer done, one canceled (insufficient funds), one commit written after its deadline (canceled)
        TransactionManager tm = manager(true);
        tm.run(transfer(a, b, 10L));
        assertThat(tm.run(transfer(b, a, 1_000L)).isCanceled()).isTrue();
        Date inserted = new Date();
        transactions().insertOne(new Document("_id", "late").append("state", "done").append("protocol", 2).append("nonce", "n")
                .append("insertedAt", inserted).append("until", new Date(inserted.getTime() - 1000)).append("lastModified", inserted));

        // when: a dry run, then prune without and with the canceled ones
        PruneResult dry = tm.prune(Duration.ZERO, PruneOptions.builder().force(true).includeCanceled(true).dryRun(true).build());
        long before = transactions().countDocuments(new Document("pruned", new Document("$exists", true)));
        PruneResult kept = tm.prune(Duration.ZERO, FORCED);
        PruneResult included = tm.prune(Duration.ZERO, PruneOptions.builder().force(true).includeCanceled(true).build());

        // then
        assertThat(dry).isEqualTo(new PruneResult(1, 2, 0, true, true, Duration.ofSeconds(31)));
        assertThat(before).as("the dry run wrote nothing").isZero();
        assertThat(kept).isEqualTo(new PruneResult(1, 0, 2, false, true, Duration.ofSeconds(31)));
        assertThat(included).isEqualTo(new PruneResult(0, 2, 0, false, true, Duration.ofSeconds(31)));
        assertThat(transactions().find(new Document("_id", "late")).first().getString("state")).as("counted by the lateness rule")
                .isEqualTo("canceled");
        assertThat(tm.counts().values()).as("stubs are no transactions any more").allMatch(n -> n == 0L);
        assertThat(tm.list(TransactionQuery.all()).transactions()).isEmpty();
    }

    @ParameterizedTest(name = "two-round commit: {0}")
    @ValueSource(booleans = {true, false})
    void prune_stubAnswersForItsId_soRunningTheIdAgainRunsNothing(boolean twoRound) {
        // given: order-1 done and order-2 canceled, both pruned (ids kept)
        TransactionManager tm = manager(twoRound);
        tm.run("order-1", transfer(a, b, 10L));
        tm.run("order-2", transfer(b, a, 500L));
        assertThat(tm.prune(Duration.ZERO, PruneOptions.builder().force(true).includeCanceled(true).build()).pruned()).isEqualTo(2);

        // when: both ids run again (order-2 now with funds), and their outcomes awaited
        TransactionOutcome again = tm.run("order-1", transfer(a, b, 10L));
        TransactionOutcome canceledAgain = tm.run("order-2", transfer(b, a, 5L));

        // then: each answers with its first outcome and moves nothing
        assertThat(again.state()).isEqualTo(TransactionState.DONE);
        assertThat(canceledAgain.state()).isEqualTo(TransactionState.CANCELED);
        assertThat(canceledAgain.reasonCode()).isEqualTo(ReasonCode.INSUFFICIENT_FUNDS);
        assertThat(balance(tm, a)).isEqualTo(90L);
        assertThat(balance(tm, b)).isEqualTo(10L);
        assertThat(tm.awaitOutcome("order-1", Duration.ofSeconds(5))).hasValueSatisfying(o -> assertThat(o.isDone()).isTrue());
        assertThat(tm.inspect("order-2")).hasValueSatisfying(v -> assertThat(v.state()).isEqualTo(TransactionState.CANCELED));
        assertThat(transactions().countDocuments()).as("two stubs, nothing more").isEqualTo(2);
    }

    @Test
    void prune_forgetIds_deletesTransactionsAndStubs_andTheIdMayRunAgain() {
        // given: order-1 pruned to a stub, order-2 done since
        TransactionManager tm = manager(true);
        tm.run("order-1", transfer(a, b, 10L));
        tm.prune(Duration.ZERO, FORCED);
        tm.run("order-2", transfer(a, b, 10L));

        // when
        PruneResult forgotten = tm.prune(Duration.ZERO, PruneOptions.builder().force(true).forgetIds(true).build());

        // then: both gone; order-1 run again is a new transaction
        assertThat(forgotten.pruned()).isEqualTo(2);
        assertThat(forgotten.idsKept()).isFalse();
        assertThat(transactions().countDocuments()).isZero();
        assertThat(tm.awaitOutcome("order-1", Duration.ZERO)).isEmpty();
        assertThat(tm.run("order-1", transfer(a, b, 10L)).isDone()).isTrue();
        assertThat(balance(tm, a)).isEqualTo(70L);
    }
}
