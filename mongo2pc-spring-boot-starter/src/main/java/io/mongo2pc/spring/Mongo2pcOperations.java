package io.mongo2pc.spring;

import io.mongo2pc.DocumentRef;
import io.mongo2pc.InvalidTransactionException;
import io.mongo2pc.TransactionContext;
import io.mongo2pc.TransactionManager;
import org.bson.Document;
import org.bson.types.ObjectId;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.dao.OptimisticLockingFailureException;
import org.springframework.data.mapping.PersistentPropertyAccessor;
import org.springframework.data.mapping.model.ConvertingPropertyAccessor;
import org.springframework.data.mongodb.core.convert.MongoConverter;
import org.springframework.data.mongodb.core.mapping.MongoPersistentEntity;
import org.springframework.data.mongodb.core.mapping.MongoPersistentProperty;
import org.springframework.transaction.support.TransactionCallback;

import java.util.Objects;
import java.util.Optional;

/**
 * Reads and writes of mapped objects (Spring Data MongoDB's {@code @Document}, {@code @Id},
 * {@code @Field}, {@code @Version}, converters and collection names, by the application's
 * {@link MongoConverter}) inside the thread's mongo2pc transaction: a call made in a
 * {@code @Transactional} method of {@link Mongo2pcTransactionManager} (or a {@code TransactionTemplate}
 * callback on it) joins that transaction, reads what it committed plus the transaction's own
 * writes, and writes at its commit. Outside one, {@link #findById} reads committed state
 * ({@link TransactionManager#readCommitted}) and each write is a transaction of its own.
 * Documents are those of the {@code default} target, in the database given (Spring Data's, so a
 * {@code MongoRepository} and this class see the same collections). Documents by id only: no query by
 * filter inside a transaction. Exceptions are Spring's {@code DataAccessException}s. Thread-safe.
 */
public class Mongo2pcOperations {
    private final Mongo2pcTransactionManager transactions;
    private final TransactionManager manager;
    private final MongoConverter converter;
    private final String database;

    public Mongo2pcOperations(Mongo2pcTransactionManager transactions, MongoConverter converter, String database) {
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.manager = transactions.manager();
        this.converter = Objects.requireNonNull(converter, "converter");
        this.database = Objects.requireNonNull(database, "database");
    }

    /** The database of the mapped documents. */
    public String database() {
        return database;
    }

    /** The collection {@code type}'s documents are kept in ({@code @Document(collection = ...)}, else derived from the class). */
    public String collectionName(Class<?> type) {
        return entity(type).getCollection();
    }

    /**
     * The {@code type} object of id {@code id}: in a transaction as it sees it (committed state plus
     * its own writes), outside one as of the last committed transaction. Empty if there is none.
     */
    public <T> Optional<T> findById(Object id, Class<T> type) {
        return findById(id, type, collectionName(type));
    }

    /** {@link #findById(Object, Class)} in {@code collection}. */
    public <T> Optional<T> findById(Object id, Class<T> type, String collection) {
        Objects.requireNonNull(id, "id");
        DocumentRef ref = ref(collection, converter.convertId(id, idProperty(entity(type)).getFieldType()));
        ThreadTransaction tx = ThreadTransaction.current(manager);
        Optional<Document> doc = translated(() -> tx != null ? tx.context.get(ref) : manager.readCommitted(ref));
        return doc.map(d -> converter.read(type, d));
    }

    /**
     * Inserts {@code entity}: an id is made if it has none (an ObjectId, as Spring Data does), a
     * {@code @Version} starts at 0 (1 if primitive). {@link DuplicateKeyException} if the transaction sees a document
     * with its id. Returns {@code entity} with its id and version set (a copy, if immutable: a record).
     */
    public <T> T insert(T entity) {
        return inTransaction(ctx -> {
            Mapped mapped = mapped(entity, true);
            if (mapped.version != null) { // as Spring Data's insert: 1 for a primitive (0 means new), else 0
                mapped.accessor.setProperty(mapped.version, mapped.version.getType().isPrimitive() ? 1 : 0);
            }
            Document doc = write(mapped);
            if (!translated(() -> ctx.insert(mapped.ref(doc), doc))) {
                throw new DuplicateKeyException(mapped.ref(doc) + " already exists: " + entity + " not inserted");
            }
            return mapped.bean();
        });
    }

    /**
     * Inserts {@code entity} or replaces the document of its id. With a {@code @Version}: a
     * version not set (or a primitive's 0) inserts; one set must be the stored document's, else
     * {@link OptimisticLockingFailureException} (as Spring Data's {@code save}), and is raised by one.
     */
    public <T> T save(T entity) {
        return inTransaction(ctx -> {
            Mapped mapped = mapped(entity, false);
            if (mapped.accessor.getProperty(mapped.id) == null || mapped.isNewVersion()) {
                return insert(entity);
            }
            DocumentRef ref = mapped.ref(write(mapped));
            if (mapped.version != null) {
                Object expected = mapped.accessor.getProperty(mapped.version);
                Optional<Document> stored = translated(() -> ctx.get(ref));
                if (stored.isEmpty() || !expected.equals(storedVersion(stored.get(), mapped))) {
                    throw new OptimisticLockingFailureException("cannot save " + ref + " with version " + expected
                            + ": it was " + stored.map(d -> "changed to version " + storedVersion(d, mapped)).orElse("deleted")
                            + " meanwhile");
                }
                mapped.accessor.setProperty(mapped.version, ((Number) expected).longValue() + 1);
            }
            Document doc = write(mapped);
            if (!translated(() -> ctx.replace(ref, doc))) {
                translated(() -> ctx.insert(ref, doc));
            }
            return mapped.bean();
        });
    }

    /**
     * Removes the document of {@code entity}'s id; with a {@code @Version}, only if the stored one
     * is the entity's. False if there was none to remove.
     */
    public boolean remove(Object entity) {
        return inTransaction(ctx -> {
            Mapped mapped = mapped(entity, false);
            if (mapped.accessor.getProperty(mapped.id) == null) {
                throw new InvalidDataAccessApiUsageException("cannot remove " + entity + ": it has no id");
            }
            DocumentRef ref = mapped.ref(write(mapped));
            if (mapped.version != null) {
                Object expected = mapped.accessor.getProperty(mapped.version);
                Optional<Document> stored = translated(() -> ctx.get(ref));
                if (stored.isEmpty() || !Objects.equals(expected, storedVersion(stored.get(), mapped))) {
                    return false;
                }
            }
            return translated(() -> ctx.delete(ref));
        });
    }

    /** Runs {@code write} in the thread's transaction, else in a transaction of its own. */
    private <R> R inTransaction(java.util.function.Function<TransactionContext, R> write) {
        ThreadTransaction tx = ThreadTransaction.current(manager);
        if (tx != null) {
            return write.apply(tx.context);
        }
        TransactionCallback<R> callback = status -> write.apply(((Mongo2pcTransactionStatus) status).context());
        return transactions.execute(null, callback);
    }

    /** An entity with its mapping: the persistent entity, a converting accessor, its id and version properties. */
    private record Mapped(MongoPersistentEntity<?> entity, PersistentPropertyAccessor<Object> accessor,
                          MongoPersistentProperty id, MongoPersistentProperty version, String database) {
        /** A version that says "not stored yet", as Spring Data reads it: none, or a primitive's 0. */
        boolean isNewVersion() {
            if (version == null) {
                return false;
            }
            Object value = accessor.getProperty(version);
            return value == null || (version.getType().isPrimitive() && ((Number) value).longValue() == 0);
        }

        /** The entity as mapped: {@code entity} itself, or a copy with the id and version set if it is immutable (a record). */
        @SuppressWarnings("unchecked")
        <T> T bean() {
            return (T) accessor.getBean();
        }

        DocumentRef ref(Document written) {
            return DocumentRef.of(database, entity.getCollection(), written.get("_id"));
        }
    }

    private Mapped mapped(Object object, boolean makeId) {
        Objects.requireNonNull(object, "entity");
        MongoPersistentEntity<?> entity = entity(object.getClass());
        PersistentPropertyAccessor<Object> accessor = new ConvertingPropertyAccessor<>(entity.getPropertyAccessor(object),
                converter.getConversionService());
        MongoPersistentProperty id = idProperty(entity);
        if (makeId && accessor.getProperty(id) == null) {
            Class<?> type = id.getType();
            if (!type.isAssignableFrom(ObjectId.class) && !converter.getConversionService().canConvert(ObjectId.class, type)) {
                throw new InvalidDataAccessApiUsageException("cannot insert " + object + ": its id is not set, and mongo2pc makes"
                        + " ids only of type ObjectId, String or BigInteger (" + entity.getName() + "." + id.getName()
                        + " is " + type.getSimpleName() + ")");
            }
            accessor.setProperty(id, new ObjectId());
        }
        return new Mapped(entity, accessor, id, entity.getVersionProperty(), database);
    }

    private Document write(Mapped mapped) {
        Document doc = new Document();
        converter.write(mapped.accessor.getBean(), doc);
        return doc;
    }

    private Object storedVersion(Document stored, Mapped mapped) {
        Object value = stored.get(mapped.version.getFieldName());
        return value == null ? null : converter.getConversionService().convert(value, mapped.version.getType());
    }

    private MongoPersistentEntity<?> entity(Class<?> type) {
        return converter.getMappingContext().getRequiredPersistentEntity(type);
    }

    private static MongoPersistentProperty idProperty(MongoPersistentEntity<?> entity) {
        MongoPersistentProperty id = entity.getIdProperty();
        if (id == null) {
            throw new InvalidDataAccessApiUsageException(entity.getName() + " has no id property (@Id, or a field named id):"
                    + " mongo2pc reaches documents by id");
        }
        return id;
    }

    private DocumentRef ref(String collection, Object id) {
        return translated(() -> DocumentRef.of(database, collection, id));
    }

    /** mongo2pc's refusal of bad input, as Spring's data access exception (the message kept). */
    private static <R> R translated(java.util.function.Supplier<R> call) {
        try {
            return call.get();
        } catch (InvalidTransactionException | IllegalArgumentException e) {
            throw new InvalidDataAccessApiUsageException(e.getMessage(), e);
        }
    }
}
