package io.mongo2pc.internal;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import org.bson.Document;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Group commit of single-document writes: the threads that write to one collection at the same
 * moment send their writes together, in one unordered bulk request, instead of one request each.
 * The first thread to arrive sends what is queued (it "leads"); the others wait for it, and the
 * next waiting thread leads the next request. A lone thread sends its write at once, as before.
 *
 * <p>Every write stays its own atomic single-document update with its own filter (guards, marker,
 * deadline, compare-and-set): combining changes how many requests carry them, not what each does.
 * The answer is exact for upserts (the server lists the ones it inserted) and for a request whose
 * updates all matched; otherwise it is "unknown" and the caller repeats its write on its own path,
 * which is idempotent and says why a write did not match. A failed request is also "unknown".
 * Thread-safe.
 */
final class WriteCombiner {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WriteCombiner.class);
    /** The most writes in one request. */
    private static final int MAX_WRITES = 256;
    /** Requests in flight at once per collection. */
    private static final int MAX_LEADERS = Integer.getInteger("mongo2pc.combiner.leaders", 1);
    /** A waiting thread looks again after this long even if nobody woke it (it should always be woken). */
    private static final long PARK_NANOS = 5_000_000;

    private final MongoCollection<Document> collection;
    private final ConcurrentLinkedQueue<Entry> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger leaders = new AtomicInteger();

    WriteCombiner(MongoCollection<Document> collection) {
        this.collection = collection;
    }

    private static final class Entry {
        final List<UpdateOneModel<Document>> writes;
        final Thread waiter = Thread.currentThread();
        boolean ok;
        volatile boolean done;

        Entry(List<UpdateOneModel<Document>> writes) {
            this.writes = writes;
        }
    }

    /**
     * Sends {@code writes} (with whatever other threads are sending) and waits for the answer.
     * True if every write took effect: an upsert inserted its document, an update matched one.
     * False if that is not known; then none, some or all of them took effect.
     */
    boolean write(List<UpdateOneModel<Document>> writes) {
        if (writes.isEmpty()) {
            return true;
        }
        Entry entry = new Entry(writes);
        queue.add(entry);
        while (!entry.done) {
            boolean sent = false;
            if (tryLead()) {
                try {
                    sent = sendOnce();
                } finally {
                    leaders.decrementAndGet();
                }
                // Whoever queued while this request was in flight leads the next one.
                Entry next = queue.peek();
                if (next != null) {
                    LockSupport.unpark(next.waiter);
                }
            }
            if (!sent && !entry.done) {
                // Another leader carries this write (or will): it wakes this thread when answered.
                LockSupport.parkNanos(this, PARK_NANOS);
            }
        }
        return entry.ok;
    }

    boolean write(UpdateOneModel<Document> write) {
        return write(List.of(write));
    }

    private boolean tryLead() {
        while (true) {
            int current = leaders.get();
            if (current >= MAX_LEADERS) {
                return false;
            }
            if (leaders.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** Sends what is queued, up to MAX_WRITES; false if nothing was. */
    private boolean sendOnce() {
        List<Entry> batch = new ArrayList<>();
        int count = 0;
        Entry next;
        while (count < MAX_WRITES && (next = queue.poll()) != null) {
            batch.add(next);
            count += next.writes.size();
        }
        if (batch.isEmpty()) {
            return false;
        }
        List<WriteModel<Document>> writes = new ArrayList<>(count);
        int upserts = 0;
        for (Entry e : batch) {
            for (UpdateOneModel<Document> w : e.writes) {
                writes.add(w);
                if (w.getOptions().isUpsert()) {
                    upserts++;
                }
            }
        }
        boolean[] inserted = new boolean[count];
        boolean updatesAllMatched = false;
        try {
            BulkWriteResult result = collection.bulkWrite(writes, new BulkWriteOptions().ordered(false));
            for (BulkWriteUpsert upsert : result.getUpserts()) {
                inserted[upsert.getIndex()] = true;
            }
            // An upsert that inserted nothing matched a document; every update matches at most one.
            int updates = count - upserts;
            int upsertsMatched = upserts - result.getUpserts().size();
            updatesAllMatched = result.getMatchedCount() - upsertsMatched == updates;
        } catch (RuntimeException e) {
            // Unknown (nothing marked as taking effect): each writer repeats its write on its own
            // path, which retries or reports the error.
            log.debug("combined write of {} to {} failed: {}", count, collection.getNamespace(), e.toString());
        } finally {
            int index = 0;
            for (Entry e : batch) {
                boolean ok = true;
                for (UpdateOneModel<Document> w : e.writes) {
                    ok &= w.getOptions().isUpsert() ? inserted[index] : updatesAllMatched;
                    index++;
                }
                e.ok = ok;
                e.done = true;
                LockSupport.unpark(e.waiter);
            }
        }
        return true;
    }
}
