package io.mongo2pc.bank;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;
import io.mongo2pc.spi.CrashPoint.Step;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionOutcome;
import io.mongo2pc.TransactionState;
import io.mongo2pc.embedded.EmbeddedServer;
import io.mongo2pc.testkit.EmbeddedMongo;
import io.mongo2pc.testkit.Invariants;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.bson.Document;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guarantee 1 as a property: for any sequence of transfers between random accounts, with the
 * owner killed at a random crash point of random transfers and each killed transfer recovered by
 * a second manager (at once, or only after later transfers ran around its half-done state), the
 * final balances are exactly the opening balances plus the transfers that ended {@code done};
 * no balance is negative and no marker is left. When every crash is recovered at once the run is
 * sequential, and then each transfer ends exactly as a simple model of the bank says.
 */
class TransferPropertiesTest {
    private static final List<String> ACCOUNTS = List.of("A", "B", "C", "D");
    private static final long OPENING = 1_000L;
    private static final List<CrashPoint> CRASH_POINTS = new ArrayList<>();
    private static final AtomicInteger TRIES = new AtomicInteger();

    static {
        List<Step> steps = List.of(Step.INSERT, Step.APPLY, Step.COMMIT, Step.RELEASE, Step.FINISH,
                Step.BEGIN_CANCEL, Step.UNDO, Step.FINISH_CANCEL);
        for (Step step : steps) {
            List<Integer> participants = switch (step) {
                case APPLY, RELEASE, UNDO -> List.of(0, 1);
                default -> List.of(-1);
            };
            for (int p : participants) {
                CRASH_POINTS.add(CrashPoint.before(step, p));
                CRASH_POINTS.add(CrashPoint.after(step, p));
            }
        }
    }

    private static EmbeddedServer server;
    private static MongoClient client;
    private static MongoClient recoveryClient;

    @BeforeContainer
    static void startServer() {
        server = EmbeddedServer.inMemory().start();
        client = MongoClients.create(new ConnectionString(server.uri()));
        recoveryClient = MongoClients.create(new ConnectionString(server.uri()));
    }

    @AfterContainer
    static void stopServer() {
        client.close();
        recoveryClient.close();
        server.close();
    }

    /** One transfer of the sequence: who pays whom, how much, where its owner dies (null: it does not). */
    record Transfer(int from, int to, long amount, CrashPoint crash, Recovery recovery) {
        @Override
        public String toString() {
            return ACCOUNTS.get(from) + "->" + ACCOUNTS.get(to) + " " + amount
                    + (crash == null ? "" : " crash " + crash + " " + recovery);
        }
    }

    /** What the second manager does about a killed transfer. */
    enum Recovery {
        /** recover(0) at once. */
        NOW,
        /** Only the final recover(0), after the later transfers ran around its half-done state. */
        LATER,
        /** An operator cancels it at once (refused past the commit point: then recover). */
        CANCEL
    }

    static final class Crash extends RuntimeException {
        Crash(CrashPoint point) {
            super("injected crash at " + point, null, false, false);
        }
    }


    @Provide
    Arbitrary<List<Transfer>> transfers() {
        Arbitrary<Integer> from = Arbitraries.integers().between(0, ACCOUNTS.size() - 1);
        Arbitrary<Integer> offset = Arbitraries.integers().between(1, ACCOUNTS.size() - 1);
        Arbitrary<Long> amount = Arbitraries.longs().between(1, 900);
        Arbitrary<CrashPoint> crash = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(2, Arbitraries.just((CrashPoint) null)),
                net.jqwik.api.Tuple.of(3, Arbitraries.of(CRASH_POINTS)));
        Arbitrary<Recovery> now = Arbitraries.of(Recovery.class);
        Arbitrary<Transfer> transfer = Combinators.combine(from, offset, amount, crash, now)
                .as((f, o, a, c, n) -> new Transfer(f, (f + o) % ACCOUNTS.size(), a, c, n));
        return transfer.list().ofMinSize(1).ofMaxSize(10);
    }

    @Property(tries = 30)
    void transfersWithCrashesAndRecovery_endWithExactlyTheDoneTransfersInEffect(@ForAll("transfers") List<Transfer> transfers) {
        String db = "prop" + TRIES.incrementAndGet();
        // A killed owner's lease is let run out (expireLeases) before anyone cancels or recovers its transfer.
        TransactionManager recoverer = Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", recoveryClient)
                .database(db).application("recoverer")).build();
        Bank bank = new Bank(Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", client).database(db)).build());
        ACCOUNTS.forEach(id -> bank.createAccount(id, OPENING));
        Map<String, Long> model = new HashMap<>();
        ACCOUNTS.forEach(id -> model.put(id, OPENING));
        boolean sequential = transfers.stream().allMatch(t -> t.crash() == null || t.recovery() != Recovery.LATER);
        Map<Object, TransactionState> modelOutcome = new LinkedHashMap<>();

        try {
            for (Transfer t : transfers) {
                String from = ACCOUNTS.get(t.from());
                String to = ACCOUNTS.get(t.to());
                AtomicReference<Object> txId = new AtomicReference<>();
                AtomicBoolean armed = new AtomicBoolean(t.crash() != null);
                CrashHook hook = (point, id) -> {
                    if (id != null) {
                        txId.set(id);
                    }
                    if (point.equals(t.crash()) && armed.compareAndSet(true, false)) {
                        throw new Crash(point);
                    }
                };
                Bank owner = new Bank(Bank.configure(TransactionManager.builder().twoRoundCommit(false).finishInBackground(false).target("default", client).database(db)
                        .application("owner").crashHook(hook)).build());
                TransactionState expected = model.get(from) >= t.amount() ? TransactionState.DONE : TransactionState.CANCELED;
                boolean crashed = false;
                try {
                    TransactionOutcome outcome = owner.transfer(from, to, t.amount());
                    assertThat(recoverer.inspect(outcome.id()).orElseThrow().state()).isEqualTo(outcome.state());
                } catch (Crash crash) {
                    crashed = true;
                }
                boolean written = txId.get() != null && recoverer.inspect(txId.get()).isPresent();
                if (crashed) {
                    io.mongo2pc.testkit.EmbeddedMongo.expireLeases(client, db);
                }
                if (crashed && written && t.recovery() == Recovery.CANCEL) {
                    try {
                        if (recoverer.cancel(txId.get(), "operator").isCanceled()) {
                            expected = TransactionState.CANCELED;
                        }
                    } catch (io.mongo2pc.TransactionException pastCommitPoint) {
                        // Past the commit point, or every operation applied (rolled forward rather than
                        // undo a credit someone may have spent): either way it ends done.
                        assertThat(pastCommitPoint.getMessage()).containsAnyOf("commit point", "rolled forward");
                        recoverer.recover(Duration.ZERO);
                    }
                } else if (crashed && t.recovery() == Recovery.NOW) {
                    recoverer.recover(Duration.ZERO);
                }
                if (written && sequential) {
                    modelOutcome.put(txId.get(), expected);
                    if (expected == TransactionState.DONE) {
                        model.merge(from, -t.amount(), Long::sum);
                        model.merge(to, t.amount(), Long::sum);
                    }
                }
            }
            io.mongo2pc.testkit.EmbeddedMongo.expireLeases(client, db);
            recoverer.recover(Duration.ZERO);

            // then: everything terminal, balances = opening + the done transfers, nothing negative, no marker
            Map<String, Long> replay = new HashMap<>();
            ACCOUNTS.forEach(id -> replay.put(id, OPENING));
            for (Document tx : EmbeddedMongo.transactions(recoveryClient, recoverer.settings().database()).find()) {
                TransactionState state = TransactionState.parse(tx.getString("state")).orElseThrow();
                assertThat(state.isTerminal()).as("transaction %s terminal: %s", tx.get("_id"), tx.toJson()).isTrue();
                if (state == TransactionState.DONE) {
                    replay.merge(tx.getString("source"), -tx.getLong("value"), Long::sum);
                    replay.merge(tx.getString("destination"), tx.getLong("value"), Long::sum);
                }
                if (sequential) {
                    assertThat(state).as("transaction %s as the sequential model says", tx.get("_id"))
                            .isEqualTo(modelOutcome.get(tx.get("_id")));
                }
            }
            Map<String, Long> actual = new HashMap<>();
            bank.accounts().find().forEach(d -> actual.put(d.getString("_id"), d.getLong("balance")));
            assertThat(actual).as("balances = opening + done transfers").isEqualTo(replay);
            if (sequential) {
                assertThat(actual).as("balances = sequential model").isEqualTo(model);
            }
            new Invariants(client).expectTotal(db, OPENING * ACCOUNTS.size()).assertHold();
        } finally {
            client.getDatabase(db).drop();
        }
    }

}
