package io.mongo2pc.examples.payments;

import io.mongo2pc.embedded.EmbeddedServer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A payments service on mongo2pc: accounts, transfers and order payments as atomic transactions
 * over MongoDB documents, balances read as of the last commit; and a shop whose checkout is a
 * {@code @Transactional} method on mongo2pc. Its beans (TransactionManager, Bank, Payments,
 * mongo2pcTransactionManager, Mongo2pcOperations, metrics, traces, health, worker) come from
 * mongo2pc-spring-boot-starter.
 *
 * <p>Run against a MongoDB with {@code --spring.mongodb.uri=mongodb://host/}; without one it
 * starts mongo2pc's embedded server in memory, so the example runs with no setup.
 */
@SpringBootApplication
public class PaymentsApplication {

    public static void main(String[] args) {
        boolean uriGiven = System.getProperty("spring.mongodb.uri") != null || System.getenv("SPRING_MONGODB_URI") != null
                || java.util.Arrays.stream(args).anyMatch(a -> a.startsWith("--spring.mongodb.uri="));
        if (!uriGiven) {
            EmbeddedServer server = EmbeddedServer.inMemory().start();
            System.setProperty("spring.mongodb.uri", server.uri());
            System.out.println("no spring.mongodb.uri given: using the embedded server at " + server.uri());
        }
        SpringApplication.run(PaymentsApplication.class, args);
    }
}
