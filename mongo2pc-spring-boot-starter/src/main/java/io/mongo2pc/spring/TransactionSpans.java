package io.mongo2pc.spring;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * The observations of a {@link Mongo2pcTransactionManager} transaction (spans with Micrometer Tracing
 * or OpenTelemetry): {@value #TRANSACTION} around the whole of it, child of whatever observation
 * is current on the thread (an HTTP request), and one {@value #ATTEMPT} per run of the method, child
 * of the transaction's, from the run's start to the next run's (it lost) or to the transaction's end
 * (so the last one covers its commit, and the protocol's own observations made meanwhile are its
 * children). Key values: {@value #OUTCOME} ({@code committed}, {@code rolled-back}, {@code conflict},
 * {@code canceled}, {@code failed}, {@code unknown}), {@value #NAME_KEY} (the method), and the
 * high-cardinality {@value #ID} and {@value #ATTEMPT_NUMBER}. One instance per manager, thread-safe;
 * each {@link Traced} belongs to the thread that runs the transaction.
 */
final class TransactionSpans {
    static final String TRANSACTION = "mongo2pc.spring.transaction";
    static final String ATTEMPT = "mongo2pc.spring.attempt";
    static final String OUTCOME = "mongo2pc.outcome";
    static final String NAME_KEY = "mongo2pc.method";
    static final String ID = "mongo2pc.transaction.id";
    static final String ATTEMPT_NUMBER = "mongo2pc.attempt";

    private final ObservationRegistry registry;

    TransactionSpans(ObservationRegistry registry) {
        this.registry = registry;
    }

    Traced start(String method) {
        Observation transaction = Observation.createNotStarted(TRANSACTION, registry)
                .contextualName("mongo2pc " + method)
                .lowCardinalityKeyValue(NAME_KEY, method)
                .start();
        return new Traced(transaction, transaction.openScope());
    }

    /** One transaction's observations. */
    final class Traced {
        private final Observation transaction;
        private final Observation.Scope scope;
        private Observation attempt;
        private Observation.Scope attemptScope;

        private Traced(Observation transaction, Observation.Scope scope) {
            this.transaction = transaction;
            this.scope = scope;
        }

        /** Run {@code number} of the method begins; the one before it (if any) lost a conflict. */
        void attempt(int number, Object transactionId) {
            endAttempt("conflict", null);
            if (number == 1) {
                transaction.highCardinalityKeyValue(KeyValue.of(ID, String.valueOf(transactionId)));
            }
            attempt = Observation.createNotStarted(ATTEMPT, registry)
                    .parentObservation(transaction)
                    .contextualName("mongo2pc attempt " + number)
                    .highCardinalityKeyValue(ATTEMPT_NUMBER, Integer.toString(number))
                    .highCardinalityKeyValue(ID, String.valueOf(transactionId))
                    .start();
            attemptScope = attempt.openScope();
        }

        /** The transaction ended with {@code outcome} (and {@code error}, if it ended by one). */
        void end(String outcome, Throwable error, int attempts) {
            endAttempt(outcome, error);
            transaction.lowCardinalityKeyValue(OUTCOME, outcome);
            if (attempts > 0) {
                transaction.highCardinalityKeyValue(ATTEMPT_NUMBER, Integer.toString(attempts));
            }
            if (error != null) {
                transaction.error(error);
            }
            scope.close();
            transaction.stop();
        }

        private void endAttempt(String outcome, Throwable error) {
            if (attempt == null) {
                return;
            }
            attempt.lowCardinalityKeyValue(OUTCOME, outcome);
            if (error != null) {
                attempt.error(error);
            }
            attemptScope.close();
            attempt.stop();
            attempt = null;
            attemptScope = null;
        }
    }
}
