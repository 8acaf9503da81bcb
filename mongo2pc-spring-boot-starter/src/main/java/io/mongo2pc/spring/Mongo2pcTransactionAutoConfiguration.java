package io.mongo2pc.spring;

import io.micrometer.observation.ObservationRegistry;
import io.mongo2pc.TransactionManager;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.data.mongodb.core.convert.MappingMongoConverter;
import org.springframework.data.mongodb.core.convert.MongoConverter;
import org.springframework.data.mongodb.core.convert.NoOpDbRefResolver;
import org.springframework.data.mongodb.core.mapping.MongoMappingContext;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Spring's transactions on mongo2pc: the {@link Mongo2pcTransactionManager} named
 * {@value #TRANSACTION_MANAGER} over the application's mongo2pc {@link TransactionManager}, and,
 * with Spring Data MongoDB, {@link Mongo2pcOperations} for mapped objects in it.
 *
 * <p>The transaction manager is the application's default one (what {@code @Transactional} with no
 * {@code transactionManager} and Spring Boot's {@code TransactionTemplate} use) only when the
 * application has no other; beside another (JDBC, JPA, a {@code MongoTransactionManager}, ...) it
 * is defined as no default candidate, so that one stays the default, and mongo2pc's is chosen by
 * name: {@code @Transactional(transactionManager = "mongo2pcTransactionManager")}. It comes after the
 * auto-configurations of Spring Boot's transaction managers, so that theirs are still made.
 */
@AutoConfiguration(after = Mongo2pcAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.transaction.jta.autoconfigure.JtaAutoConfiguration",
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcTransactionManagerAutoConfiguration",
        "org.springframework.boot.data.neo4j.autoconfigure.DataNeo4jAutoConfiguration",
        "org.springframework.boot.data.neo4j.autoconfigure.Neo4jDataAutoConfiguration",
        "org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"},
        beforeName = "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration")
@ConditionalOnClass(PlatformTransactionManager.class)
@ConditionalOnBean(TransactionManager.class)
@EnableConfigurationProperties(Mongo2pcProperties.class)
@Import({Mongo2pcTransactionAutoConfiguration.TheOnlyTransactionManager.class,
        Mongo2pcTransactionAutoConfiguration.BesideAnother.class})
public class Mongo2pcTransactionAutoConfiguration {
    /** The bean name of the {@link Mongo2pcTransactionManager}. */
    public static final String TRANSACTION_MANAGER = "mongo2pcTransactionManager";

    static Mongo2pcTransactionManager transactionManager(TransactionManager manager, Mongo2pcProperties properties,
                                                         ObjectProvider<ObservationRegistry> observations) {
        return new Mongo2pcTransactionManager(manager, properties.getTransactional().getTimeout(),
                observations.getIfUnique(() -> ObservationRegistry.NOOP));
    }

    /** The application has no transaction manager: mongo2pc's is its default. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(value = org.springframework.transaction.TransactionManager.class, name = TRANSACTION_MANAGER)
    static class TheOnlyTransactionManager {
        @Bean(TRANSACTION_MANAGER)
        Mongo2pcTransactionManager mongo2pcTransactionManager(TransactionManager manager, Mongo2pcProperties properties,
                                                              ObjectProvider<ObservationRegistry> observations) {
            return transactionManager(manager, properties, observations);
        }
    }

    /**
     * The application has a transaction manager of its own: that one stays the default. (Either
     * configuration may be looked at first; each condition holds in its case only.)
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(org.springframework.transaction.TransactionManager.class)
    @ConditionalOnMissingBean(name = TRANSACTION_MANAGER)
    static class BesideAnother {
        @Bean(name = TRANSACTION_MANAGER, defaultCandidate = false)
        Mongo2pcTransactionManager mongo2pcTransactionManager(TransactionManager manager, Mongo2pcProperties properties,
                                                              ObjectProvider<ObservationRegistry> observations) {
            return transactionManager(manager, properties, observations);
        }
    }

    /** Mapped objects in mongo2pc transactions, with the application's Spring Data MongoDB mapping. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MongoConverter.class)
    static class OperationsConfiguration {
        @Bean
        @ConditionalOnMissingBean
        Mongo2pcOperations mongo2pcOperations(@Qualifier(TRANSACTION_MANAGER) Mongo2pcTransactionManager transactions,
                                              ObjectProvider<MongoConverter> converter,
                                              ObjectProvider<MongoDatabaseFactory> databases, TransactionManager manager) {
            MongoDatabaseFactory factory = databases.getIfUnique();
            String database = factory != null ? factory.getMongoDatabase().getName() : manager.settings().database();
            return new Mongo2pcOperations(transactions, converter.getIfUnique(OperationsConfiguration::plainConverter), database);
        }

        /** Spring Data's mapping with no customization, for an application that has Spring Data MongoDB but no converter bean. */
        private static MongoConverter plainConverter() {
            MongoMappingContext mapping = new MongoMappingContext();
            mapping.afterPropertiesSet();
            MappingMongoConverter converter = new MappingMongoConverter(NoOpDbRefResolver.INSTANCE, mapping);
            converter.afterPropertiesSet();
            return converter;
        }
    }
}
