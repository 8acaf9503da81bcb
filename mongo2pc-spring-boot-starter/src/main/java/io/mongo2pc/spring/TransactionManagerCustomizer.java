package io.mongo2pc.spring;

import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionManagerBuilder;

/**
 * Changes the builder of the auto-configured {@link TransactionManager} after the
 * {@code mongo2pc.*} properties were applied: codecs of the application's own transaction
 * documents, an id supplier, a crash hook for tests. Beans of this type are applied in their
 * {@code @Order}. A crash hook set here replaces the tracing one (wrap it to keep both).
 */
@FunctionalInterface
public interface TransactionManagerCustomizer {
    void customize(TransactionManagerBuilder builder);
}
