package io.mongo2pc.embedded.internal;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.AbstractMongoBackend;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import de.bwaldvogel.mongo.wire.message.MongoQuery;
import io.mongo2pc.embedded.ProcessCost;
import io.netty.channel.Channel;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The embedded server's backend: upstream's command handling over {@link DurableDatabase}s, with
 * optional durability through a {@link DurableStore}.
 *
 * <p>With a store, no reply leaves a request before every change appended so far (its own and any
 * it could have seen) is forced to disk, so an acknowledged write survives a crash and a client
 * never sees data a crash could take back. Without a store everything stays in memory.
 *
 * <p>Thread-safe.
 */
public final class DurableBackend extends AbstractMongoBackend {

    private final DurableStore store;
    /** Null: replies leave as soon as they may. */
    private volatile AddedLatency latency;
    private volatile Journal journal = Journal.NONE;
    private final Journal delegatingJournal = record -> journal.append(record);

    private DurableBackend(DurableStore store) {
        this.store = store;
    }

    /** A backend whose data lives in memory only. */
    public static DurableBackend inMemory() {
        return new DurableBackend(null);
    }

    /** A backend holding what {@code store} recovered, journaling every change to it. Starts the store. */
    public static DurableBackend onDisk(DurableStore store) {
        DurableBackend backend = new DurableBackend(store);
        backend.restore(store.recoveredState());
        backend.journal = store;
        store.start();
        return backend;
    }

    /** Every reply leaves no sooner than {@code latency} after its request arrived (null: no latency). */
    public DurableBackend withLatency(AddedLatency latency) {
        this.latency = latency;
        return this;
    }

    private void restore(StoreState state) {
        for (Map.Entry<String, Map<String, StoreState.CollectionState>> db : state.databases.entrySet()) {
            DurableDatabase database = (DurableDatabase) resolveDatabase(db.getKey());
            for (Map.Entry<String, StoreState.CollectionState> entry : db.getValue().entrySet()) {
                StoreState.CollectionState saved = entry.getValue();
                CollectionOptions options = saved.idField == null
                        ? CollectionOptions.withoutIdField() : CollectionOptions.withIdField(saved.idField);
                MongoCollection<?> collection = database.createCollectionOrThrowIfExists(entry.getKey(), options);
                saved.indexes.values().forEach(database::restoreIndex);
                for (Document document : saved.documents.values()) {
                    collection.addDocument(document);
                }
            }
        }
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        return new DurableDatabase(databaseName, getCursorRegistry(), delegatingJournal);
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        beforeRequest(command, query);
        if ("hello".equalsIgnoreCase(command)) {
            return asRequest(channel, () -> hello(channel, databaseName, query));
        }
        return asRequest(channel, () -> super.handleCommand(channel, databaseName, command, query));
    }

    /**
     * {@code hello}, the handshake's current name, which upstream does not know: Spring Boot's health
     * indicator sends it, as do drivers once a server says {@code helloOk}. Answered as upstream
     * answers {@code isMaster}, with {@code isWritablePrimary} in place of {@code ismaster}.
     */
    private Document hello(Channel channel, String databaseName, Document query) {
        Document answer = super.handleCommand(channel, databaseName, "isMaster", query);
        Object primary = answer.remove("ismaster");
        Document hello = new Document("isWritablePrimary", primary == null ? Boolean.TRUE : primary);
        hello.putAll(answer);
        return hello;
    }

    /** Upstream's status, and under {@code mongo2pc} what this server's process has cost so far ({@link ProcessCost}). */
    @Override
    public Document getServerStatus() {
        Document status = super.getServerStatus();
        ProcessCost cost = ProcessCost.now();
        status.put("mongo2pc", new Document("processCpuMicros", cost.cpuNanos() < 0 ? -1 : cost.cpuNanos() / 1_000)
                .append("contextSwitches", cost.contextSwitches()));
        return status;
    }

    @Override
    public Document handleMessage(MongoMessage message) {
        checkUsable();
        return asRequest(message.getChannel(), () -> super.handleMessage(message));
    }

    @Override
    public QueryResult handleQuery(MongoQuery query) {
        checkUsable();
        return asRequest(query.getChannel(), () -> super.handleQuery(query));
    }

    /** Runs {@code handling} as (part of) the request this thread handles on {@code channel}; see {@link Request}. */
    private <T> T asRequest(Channel channel, Supplier<T> handling) {
        enterRequest(channel);
        try {
            return handling.get();
        } finally {
            exitRequest();
        }
    }

    private void checkUsable() {
        if (store != null) {
            store.checkUsable();
        }
    }

    /**
     * The request this thread handles: upstream's handleMessage calls handleCommand, and only the
     * outermost call counts as a request for the store's group commit and, on its way out, holds
     * the reply until everything the request could have written or read is on disk (an inner hold
     * would be repeated by the outer one with a later target, costing a second fsync).
     */
    private static final class Request {
        int depth;
        Channel channel;
    }

    private static final ThreadLocal<Request> REQUEST = ThreadLocal.withInitial(Request::new);

    private void enterRequest(Channel channel) {
        Request request = REQUEST.get();
        if (request.depth++ != 0) {
            return;
        }
        AddedLatency added = latency;
        if (added != null && channel != null) {
            added.requestStarted(channel);
        }
        if (store != null) {
            request.channel = channel;
            store.requestStarted();
        }
    }

    /**
     * On the way out of a request: its reply must wait until every record appended so far is on
     * disk. The connection's {@link ReplyGate} holds the reply while the thread goes on to other
     * connections; without a connection (not called through the wire protocol) the thread waits.
     */
    private void exitRequest() {
        Request request = REQUEST.get();
        if (--request.depth == 0 && store != null) {
            Channel channel = request.channel;
            request.channel = null;
            long lsn = store.appendedLsn();
            store.requestFinished();
            if (store.forceIfIdle(lsn)) {
                return;
            }
            ReplyGate gate = channel == null ? null : ReplyGate.of(channel, store);
            if (gate == null) {
                store.awaitDurable(lsn);
            } else {
                gate.holdNextReply(lsn);
            }
        }
    }

    @Override
    public void dropDatabase(String databaseName) {
        super.dropDatabase(databaseName);
        journal.append(new LogRecord(LogRecord.Type.DROP_DATABASE, databaseName, null, null));
    }

    private void beforeRequest(String command, Document query) {
        if (store == null) {
            return;
        }
        store.checkUsable();
        if ("renameCollection".equalsIgnoreCase(command)) {
            throw new MongoServerError(115, "renameCollection is not supported by the on-disk embedded server");
        }
        if ("aggregate".equalsIgnoreCase(command) && query.get("pipeline") instanceof List<?> pipeline) {
            for (Object stage : pipeline) {
                if (stage instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge"))) {
                    throw new MongoServerError(115, "$out and $merge are not supported by the on-disk embedded server");
                }
            }
        }
    }
}
