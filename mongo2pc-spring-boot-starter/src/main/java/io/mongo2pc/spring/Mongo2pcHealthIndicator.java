package io.mongo2pc.spring;

import io.mongo2pc.TransactionManager;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.time.Duration;

/**
 * mongo2pc's health ({@code /actuator/health/mongo2pc}): DOWN when the coordinator (the
 * transactions collection's server) cannot be reached, or when an open transaction has gone
 * unchanged for more than twice the lease, which means no process is finishing it (no worker or
 * recovery runs, or it keeps failing); UP otherwise. A check reads the oldest open transaction
 * and the server's clock, and waits up to the retry timeout for an unreachable server.
 */
public final class Mongo2pcHealthIndicator extends AbstractHealthIndicator {
    private final TransactionManager manager;

    public Mongo2pcHealthIndicator(TransactionManager manager) {
        super("mongo2pc health check failed: the coordinator could not be reached");
        this.manager = manager;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Duration lease = manager.settings().lease();
        Duration oldest = manager.oldestOpen();
        Duration limit = lease.multipliedBy(2);
        builder.withDetail("oldestOpenSeconds", Mongo2pcEndpoint.seconds(oldest))
                .withDetail("leaseSeconds", Mongo2pcEndpoint.seconds(lease));
        if (oldest.compareTo(limit) > 0) {
            builder.down().withDetail("reason", "an open transaction has waited " + Mongo2pcEndpoint.seconds(oldest)
                    + "s, more than twice the lease (" + Mongo2pcEndpoint.seconds(limit)
                    + "s): no process is finishing it; run recovery (mongo2pc.worker.enabled=true, or `mongo2pc recover`)");
        } else {
            builder.up();
        }
    }
}
