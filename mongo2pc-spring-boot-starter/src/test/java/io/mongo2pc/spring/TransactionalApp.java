package io.mongo2pc.spring;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.annotation.Id;
import org.springframework.data.annotation.Version;
import org.springframework.data.mongodb.core.mapping.Document;
import org.springframework.data.mongodb.core.mapping.Field;
import org.springframework.data.mongodb.repository.MongoRepository;
import org.springframework.data.mongodb.repository.config.EnableMongoRepositories;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An application of {@code @Transactional} services on mongo2pc, as a Spring developer writes
 * them: mapped entities read and written through {@link Mongo2pcOperations}, methods that call
 * each other, events after commit. The tests of {@link TransactionalTestBase} share it (one context).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableMongoRepositories(considerNestedRepositories = true, basePackageClasses = TransactionalApp.class)
@Import({TransactionalApp.Wallets.class, TransactionalApp.Transfers.class, TransactionalApp.Counters.class,
        TransactionalApp.Receipts.class})
class TransactionalApp {
    static final String TM = Mongo2pcTransactionAutoConfiguration.TRANSACTION_MANAGER;

    /** Checks that every observation is started, scoped and stopped in order. */
    @Bean
    TestObservationRegistry observationRegistry() {
        return TestObservationRegistry.create();
    }

    /** Keeps the stopped observations (Spring Boot adds every handler bean to the registry). */
    @Bean
    StoppedObservations stoppedObservations() {
        return new StoppedObservations();
    }

    /** The observations stopped so far, in the order they stopped. */
    static final class StoppedObservations implements ObservationHandler<Observation.Context> {
        private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        List<Observation.Context> named(String name) {
            return stopped.stream().filter(c -> name.equals(c.getName())).toList();
        }
    }

    /** A wallet, with Spring Data's mapping: its collection, a renamed field, optimistic locking. */
    @Document("wallets")
    static class Wallet {
        @Id String id;
        @Field("bal") long balance;
        @Version Long version;
        String owner;

        Wallet() { }

        Wallet(String id, long balance, String owner) {
            this.id = id;
            this.balance = balance;
            this.owner = owner;
        }
    }

    /** An immutable entity. */
    @Document("counters")
    record Counter(@Id String id, long value) { }

    /** A document whose id mongo2pc makes (an ObjectId, kept as a String). */
    @Document("receipts")
    static class Receipt {
        @Id String id;
        String wallet;
        long amount;
    }

    /** An id mongo2pc cannot make (a number). */
    @Document("tickets")
    record Ticket(@Id Long number, String text) { }

    interface WalletRepository extends MongoRepository<Wallet, String> { }

    static class Refusal extends Exception {
        Refusal(String message) {
            super(message);
        }
    }

    record Deposited(String wallet, long amount) { }

    /** The status of the run in progress: which attempt, which transaction. */
    static Mongo2pcTransactionStatus status() {
        return (Mongo2pcTransactionStatus) TransactionAspectSupport.currentTransactionStatus();
    }

    static class Wallets {
        final Mongo2pcOperations ops;
        final ApplicationEventPublisher events;
        private final AtomicInteger refusedRuns = new AtomicInteger();

        Wallets(Mongo2pcOperations ops, ApplicationEventPublisher events) {
            this.ops = ops;
            this.events = events;
        }

        /** How many times a method of a refused propagation ran. */
        public int refusedRuns() {
            return refusedRuns.get();
        }

        @Transactional(transactionManager = TM)
        public Wallet deposit(String id, long amount) {
            Wallet wallet = ops.findById(id, Wallet.class).orElseThrow(() -> new NoSuchElementException("no wallet " + id));
            wallet.balance += amount;
            if (wallet.balance < 0) {
                throw new IllegalStateException("wallet " + id + " would go below zero");
            }
            events.publishEvent(new Deposited(id, amount));
            return ops.save(wallet);
        }

        @Transactional(transactionManager = TM)
        public void depositThenFail(String id, long amount) {
            deposit(id, amount);
            throw new IllegalStateException("refused after the deposit");
        }

        @Transactional(transactionManager = TM)
        public void depositThenRefuse(String id, long amount) throws Refusal {
            deposit(id, amount);
            throw new Refusal("refused after the deposit, which Spring's rules commit");
        }

        @Transactional(transactionManager = TM, rollbackFor = Refusal.class)
        public void depositThenRefuseRollingBack(String id, long amount) throws Refusal {
            deposit(id, amount);
            throw new Refusal("refused after the deposit, rolled back by the method's rule");
        }

        @Transactional(transactionManager = TM, noRollbackFor = IllegalArgumentException.class)
        public void depositThenFailCommitting(String id, long amount) {
            deposit(id, amount);
            throw new IllegalArgumentException("failed after the deposit, committed by the method's rule");
        }

        @Transactional(transactionManager = TM)
        public String depositThenRollBack(String id, long amount) {
            deposit(id, amount);
            status().setRollbackOnly();
            return "rolled back on purpose";
        }

        @Transactional(transactionManager = TM, propagation = Propagation.REQUIRES_NEW)
        public Wallet depositOnItsOwn(String id, long amount) {
            return deposit(id, amount);
        }

        @Transactional(transactionManager = TM, propagation = Propagation.MANDATORY)
        public Wallet depositInCallersTransaction(String id, long amount) {
            return deposit(id, amount);
        }

        @Transactional(transactionManager = TM, propagation = Propagation.NEVER)
        public Optional<Wallet> readOutside(String id) {
            return ops.findById(id, Wallet.class);
        }

        @Transactional(transactionManager = TM, propagation = Propagation.SUPPORTS)
        public void supports(String id) {
            refusedRuns.incrementAndGet();
            deposit(id, 1);
        }

        @Transactional(transactionManager = TM, propagation = Propagation.NOT_SUPPORTED)
        public void notSupported(String id) {
            refusedRuns.incrementAndGet();
            deposit(id, 1);
        }

        @Transactional(transactionManager = TM, propagation = Propagation.NESTED)
        public void nested(String id) {
            refusedRuns.incrementAndGet();
            deposit(id, 1);
        }
    }

    static class Transfers {
        final Wallets wallets;
        final Mongo2pcOperations ops;

        Transfers(Wallets wallets, Mongo2pcOperations ops) {
            this.wallets = wallets;
            this.ops = ops;
        }

        /** Two methods joined into one transaction: both deposits or neither. */
        @Transactional(transactionManager = TM)
        public void transfer(String from, String to, long amount) {
            wallets.deposit(to, amount);
            wallets.deposit(from, -amount);
        }

        @Transactional(transactionManager = TM)
        public long depositAndReadBack(String id, long amount) {
            wallets.deposit(id, amount);
            return ops.findById(id, Wallet.class).orElseThrow().balance;
        }

        @Transactional(transactionManager = TM)
        public void catchJoinedFailure(String id) {
            wallets.deposit(id, 5);
            try {
                wallets.depositThenFail(id, 1);
            } catch (IllegalStateException expected) {
                // the caller carries on; the transaction cannot commit all the same
            }
        }

        @Transactional(transactionManager = TM)
        public void failAfterRequiresNew(String first, String second) {
            wallets.deposit(first, 1);
            wallets.depositOnItsOwn(second, 1);
            throw new IllegalStateException("the outer method fails after its REQUIRES_NEW call committed");
        }

        @Transactional(transactionManager = TM)
        public Wallet withMandatory(String id, long amount) {
            return wallets.depositInCallersTransaction(id, amount);
        }

        @Transactional(transactionManager = TM)
        public void callNever(String id) {
            wallets.readOutside(id);
        }
    }

    /** Read-modify-write of a counter; the first run of each call meets the other callers' first runs before it writes. */
    static class Counters {
        final Mongo2pcOperations ops;
        final ApplicationEventPublisher events;
        private final List<Integer> runs = new CopyOnWriteArrayList<>();

        Counters(Mongo2pcOperations ops, ApplicationEventPublisher events) {
            this.ops = ops;
            this.events = events;
        }

        /** The attempt number of each run of {@link #increment}, in order. */
        public List<Integer> runs() {
            return List.copyOf(runs);
        }

        @Transactional(transactionManager = TM)
        public long increment(String id, CyclicBarrier firstRuns) throws Exception {
            Counter counter = ops.findById(id, Counter.class).orElseThrow();
            int attempt = status().attempt();
            runs.add(attempt);
            if (attempt == 1) {
                firstRuns.await(30, TimeUnit.SECONDS); // every caller has read the same value
            }
            events.publishEvent(new Deposited(id, 1));
            return ops.save(new Counter(id, counter.value() + 1)).value();
        }

        @Transactional(transactionManager = TM, timeout = 1)
        public long incrementWithin1s(String id) {
            Counter counter = ops.findById(id, Counter.class).orElseThrow();
            return ops.save(new Counter(id, counter.value() + 1)).value();
        }
    }

    /** Events of committed transactions only, however many times their methods ran. */
    static class Receipts {
        private final List<Deposited> committed = new CopyOnWriteArrayList<>();
        private final List<Deposited> rolledBack = new CopyOnWriteArrayList<>();

        public List<Deposited> committed() {
            return List.copyOf(committed);
        }

        public List<Deposited> rolledBack() {
            return List.copyOf(rolledBack);
        }

        @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
        public void afterCommit(Deposited deposited) {
            committed.add(deposited);
        }

        @TransactionalEventListener(phase = TransactionPhase.AFTER_ROLLBACK)
        public void afterRollback(Deposited deposited) {
            rolledBack.add(deposited);
        }
    }
}
