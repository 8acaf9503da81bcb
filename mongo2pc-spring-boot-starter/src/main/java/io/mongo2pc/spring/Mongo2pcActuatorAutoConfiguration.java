package io.mongo2pc.spring;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.bank.Bank;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Spring Boot Actuator: the {@code mongo2pc} health indicator
 * ({@code management.health.mongo2pc.enabled}) and the {@code mongo2pc} endpoint, for the
 * application's {@link TransactionManager}, auto-configured or its own.
 */
@AutoConfiguration(after = Mongo2pcAutoConfiguration.class)
@ConditionalOnBean(TransactionManager.class)
public class Mongo2pcActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("mongo2pc")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "mongo2pcHealthIndicator")
        Mongo2pcHealthIndicator mongo2pcHealthIndicator(TransactionManager manager) {
            return new Mongo2pcHealthIndicator(manager);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    @ConditionalOnAvailableEndpoint(Mongo2pcEndpoint.class)
    static class EndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        Mongo2pcEndpoint mongo2pcEndpoint(TransactionManager manager, ObjectProvider<Bank> bank,
                                          ObjectProvider<Mongo2pcWorker> worker) {
            return new Mongo2pcEndpoint(manager, bank.getIfUnique(), worker.getIfUnique());
        }
    }
}
