package io.mongo2pc.spring;

import com.mongodb.client.MongoClient;
import io.mongo2pc.DocumentRef;
import io.mongo2pc.FaultProxy;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.testing.TestManagers;
import io.mongo2pc.testing.Unreachable;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.transaction.InvalidTimeoutException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Mongo2pcTransactionManager} without Spring Boot: its refusals, and a database out of reach. */
class Mongo2pcTransactionManagerTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    @Test
    void databaseOutOfReach_isOutcomeUnknown_asTransactionSystemException_keepingTheId() {
        try (MongoClient unreachable = Unreachable.client();
             TransactionManager core = TestManagers.builder(unreachable, mongo.database(), "app")
                     .retryTimeout(Duration.ofMillis(300)).build()) {
            TransactionTemplate template = new TransactionTemplate(new Mongo2pcTransactionManager(core));
            DocumentRef ref = DocumentRef.of(mongo.database(), "wallets", "w1");

            assertThatThrownBy(() -> template.execute(status -> status instanceof Mongo2pcTransactionStatus s
                    ? s.context().get(ref) : null))
                    .isInstanceOf(TransactionSystemException.class)
                    .isInstanceOfSatisfying(Mongo2pcOutcomeUnknownException.class, e ->
                            assertThat(e.transactionId()).isNotNull().hasToString(String.valueOf(
                                    ((io.mongo2pc.OutcomeUnknownException) e.getCause()).transactionId())));
        }
    }

    @Test
    void databaseOutOfReachForAReadInsideTheMethod_isOutcomeUnknown_asTransactionSystemException() throws Exception {
        try (FaultProxy proxy = new FaultProxy(mongo.uri());
             MongoClient viaProxy = proxy.newClient(200);
             TransactionManager core = TestManagers.builder(viaProxy, mongo.database(), "app")
                     .retryTimeout(Duration.ofMillis(600)).build()) {
            TransactionTemplate template = new TransactionTemplate(new Mongo2pcTransactionManager(core));
            DocumentRef ref = DocumentRef.of(mongo.database(), "wallets", "w1");
            proxy.dropReplies(1_000, request -> request.contains("wallets")); // the transaction starts; its read gets no answer

            assertThatThrownBy(() -> template.execute(status -> ((Mongo2pcTransactionStatus) status).context().get(ref)))
                    .isInstanceOf(TransactionSystemException.class)
                    .isInstanceOf(Mongo2pcOutcomeUnknownException.class)
                    .cause().hasMessageStartingWith("gave up on read of transaction").hasMessageNotContaining("state ?");
        }
    }

    @Test
    void programmaticUse_andANonPositiveTimeout_areRefusedInWords() {
        try (TransactionManager core = TestManagers.builder(mongo.client(), mongo.database(), "app").build()) {
            Mongo2pcTransactionManager tm = new Mongo2pcTransactionManager(core);
            TransactionTemplate zero = new TransactionTemplate(tm);
            zero.setTimeout(0);
            zero.setName("checkout");

            assertThatThrownBy(() -> tm.getTransaction(new DefaultTransactionDefinition()))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("use @Transactional or TransactionTemplate, not getTransaction, commit and rollback");
            assertThatThrownBy(() -> zero.execute(status -> "never run")).isInstanceOf(InvalidTimeoutException.class)
                    .hasMessage("'checkout' has timeout 0s: mongo2pc needs a positive number of seconds (how long the method"
                            + " may run again after conflicts)");
        }
    }
}
