package io.mongo2pc.spring;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import io.mongo2pc.bank.Bank;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code /actuator/mongo2pc}: the figures of the CLI's {@code status --json}, under its keys:
 * transactions in each state, markers left on accounts (with a {@link Bank}), and how long the
 * oldest open transaction has waited in seconds; with an in-process worker, what it has done.
 */
@Endpoint(id = "mongo2pc")
public class Mongo2pcEndpoint {
    private final TransactionManager manager;
    private final Bank bank;
    private final Mongo2pcWorker worker;

    /** {@code bank} and {@code worker} may be null. */
    public Mongo2pcEndpoint(TransactionManager manager, Bank bank, Mongo2pcWorker worker) {
        this.manager = manager;
        this.bank = bank;
        this.worker = worker;
    }

    @ReadOperation
    public Map<String, Object> status() {
        Map<TransactionState, Long> counts = manager.counts();
        Map<String, Object> status = new LinkedHashMap<>();
        for (TransactionState state : TransactionState.values()) {
            status.put(state.stored(), counts.getOrDefault(state, 0L));
        }
        if (bank != null) {
            status.put("markers", bank.markers());
        }
        status.put("oldestOpenSeconds", seconds(manager.oldestOpen()));
        if (worker != null) {
            status.put("worker", Map.of("ran", worker.ran(), "recovered", worker.recovered(), "errors", worker.errors()));
        }
        return status;
    }

    /** Seconds with milliseconds, as the CLI prints them. */
    static BigDecimal seconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis()).movePointLeft(3).setScale(3, RoundingMode.UNNECESSARY);
    }
}
