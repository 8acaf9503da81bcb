package io.mongo2pc.spring;

import com.mongodb.client.MongoClient;
import io.mongo2pc.testkit.EmbeddedMongo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.logging.ConditionEvaluationReportLoggingListener;
import org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Which transaction manager the application's transactions get, and the beans of mapped objects. */
class Mongo2pcTransactionAutoConfigurationTest {
    @RegisterExtension
    static EmbeddedMongo mongo = EmbeddedMongo.inMemory();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withInitializer(ConditionEvaluationReportLoggingListener.forLogLevel(LogLevel.DEBUG))
                .withConfiguration(AutoConfigurations.of(MongoAutoConfiguration.class, DataMongoAutoConfiguration.class,
                        Mongo2pcAutoConfiguration.class, Mongo2pcTransactionAutoConfiguration.class,
                        TransactionAutoConfiguration.class))
                .withPropertyValues("spring.mongodb.uri=" + mongo.uri(), "spring.mongodb.database=" + mongo.database() + "_data",
                        "mongo2pc.database=" + mongo.database());
    }

    /** A transaction manager of the application's own (JDBC's, JPA's, ... stand in for it). */
    static final class OtherTransactionManager implements PlatformTransactionManager {
        @Override
        public TransactionStatus getTransaction(TransactionDefinition definition) {
            return new SimpleTransactionStatus();
        }

        @Override
        public void commit(TransactionStatus status) { }

        @Override
        public void rollback(TransactionStatus status) { }
    }

    @Test
    void theOnlyTransactionManager_isTheDefault_ofTransactionalAndTransactionTemplate() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            Object mongo2pc = context.getBean(Mongo2pcTransactionAutoConfiguration.TRANSACTION_MANAGER);
            assertThat(mongo2pc).isInstanceOf(Mongo2pcTransactionManager.class);
            assertThat(context.getBean(PlatformTransactionManager.class)).isSameAs(mongo2pc);
            assertThat(context.getBean(TransactionTemplate.class).getTransactionManager()).isSameAs(mongo2pc);
            assertThat(((Mongo2pcTransactionManager) mongo2pc).defaultTimeout()).isEqualTo(Duration.ofSeconds(15));
        });
    }

    @Test
    void besideTheApplicationsTransactionManager_staysOutOfItsWay_chosenByName() {
        runner().withBean("transactionManager", OtherTransactionManager.class, OtherTransactionManager::new)
                .withPropertyValues("mongo2pc.transactional.timeout=3s").run(context -> {
            assertThat(context).hasNotFailed();
            OtherTransactionManager other = context.getBean(OtherTransactionManager.class);
            assertThat(context.getBean(PlatformTransactionManager.class)).as("the default, by type").isSameAs(other);
            assertThat(context.getBean(TransactionTemplate.class).getTransactionManager()).isSameAs(other);
            // what @Transactional(transactionManager = "mongo2pcTransactionManager") looks up
            TransactionManager chosen = BeanFactoryAnnotationUtils.qualifiedBeanOfType(context.getBeanFactory(),
                    TransactionManager.class, Mongo2pcTransactionAutoConfiguration.TRANSACTION_MANAGER);
            assertThat(chosen).isInstanceOf(Mongo2pcTransactionManager.class);
            assertThat(((Mongo2pcTransactionManager) chosen).defaultTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(context).hasSingleBean(Mongo2pcOperations.class);
        });
    }

    @Test
    void operations_mapWithSpringDatasConverter_inSpringDatasDatabase() {
        runner().run(context -> {
            Mongo2pcOperations ops = context.getBean(Mongo2pcOperations.class);
            assertThat(ops.database()).isEqualTo(mongo.database() + "_data");
            assertThat(ops.collectionName(TransactionalApp.Wallet.class)).isEqualTo("wallets");
            assertThat(context.getBean(MongoClient.class)).isNotNull();
        });
    }
}
