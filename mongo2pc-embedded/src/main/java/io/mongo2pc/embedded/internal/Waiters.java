package io.mongo2pc.embedded.internal;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads that block until their record is on disk ({@link #awaitDurable}): group commit without
 * a writer thread, the waiters force for themselves.
 *
 * <p>Thread-safe: the list of parked threads is guarded by the store's lock ({@link GroupCommit#lock}).
 */
final class Waiters {

    private final GroupCommit commit;
    private final ReentrantLock lock;
    /** Guarded by lock: threads parked in {@link #awaitDurable}, not yet woken. */
    private final List<Waiter> parked = new ArrayList<>();
    /** Threads inside {@link #awaitDurable}. */
    private final AtomicInteger inside = new AtomicInteger();

    Waiters(GroupCommit commit) {
        this.commit = commit;
        this.lock = commit.lock;
    }

    /**
     * Blocks until record {@code lsn} and all before it are on disk.
     *
     * <p>A waiter whose record is not covered by a force already running claims every record
     * appended so far, writes what is not yet written (in order, to the page cache) and forces the
     * log, concurrently with other forces (the kernel merges concurrent forces of one file, so a
     * request waits for about one force, not for the one running plus its own). Waiters covered by
     * a running force park until it returns; a returning force wakes exactly the waiters it made
     * durable, and one waiter it did not cover (to force for it and everyone after it), never all
     * of them: a wake-up costs a context switch, and waking every waiter after every force cost
     * 5.8 futex calls and 4.6 context switches per durable update at 16 client threads
     * (docs/BENCHMARKS.md).
     *
     * <p>Siblings: while some requests being handled are not yet waiting here (they are still
     * computing and will append records), a waiter holds its force back ({@link HoldBack}); the
     * last request to arrive, or the first waiter whose delay ran out, forces for all of them.
     */
    void awaitDurable(long lsn) {
        if (commit.isDurable(lsn)) {
            return;
        }
        Waiter me = new Waiter(lsn, Thread.currentThread());
        HoldBack holdBack = commit.newHoldBack();
        // an interrupt would close the log's channel in the middle of a write or force (and fail
        // the store): clear the flag while here, restore it on the way out
        boolean interrupted = Thread.interrupted();
        inside.incrementAndGet();
        try {
            lock.lock();
            while (true) {
                // here with the lock held, and not in the list of waiters
                if (commit.isDurable(lsn)) {
                    lock.unlock();
                    return;
                }
                if (commit.failure() != null) {
                    lock.unlock();
                    commit.checkFailure();
                }
                long parkNanos = -1; // below zero: force now; zero: until woken; above: at most that long
                if (commit.isClaimed(lsn) || !commit.mayStartForce()) {
                    parkNanos = 0;
                } else {
                    long left = holdBack.nanosLeft(inside.get() < commit.activeRequests());
                    if (left > 0) {
                        parkNanos = left;
                    }
                }
                if (parkNanos < 0) {
                    interrupted |= Thread.interrupted();
                    commit.forceFor();
                    continue;
                }
                me.listed = true;
                me.holding = parkNanos > 0;
                parked.add(me);
                lock.unlock();
                if (parkNanos == 0) {
                    LockSupport.park(this);
                } else {
                    LockSupport.parkNanos(this, parkNanos);
                }
                // park returns at once while the interrupt flag is set: clear it again
                interrupted |= Thread.interrupted();
                if (!me.listed && commit.isDurable(lsn)) {
                    return; // woken by the force that made the record durable: no need for the lock
                }
                lock.lock();
                if (me.listed) {
                    parked.remove(me);
                    me.listed = false;
                }
            }
        } finally {
            if (lock.isHeldByCurrentThread()) {
                lock.unlock(); // only if something threw with the lock held
            }
            inside.decrementAndGet();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether a thread is parked here. Called with the lock held. */
    boolean any() {
        return !parked.isEmpty();
    }

    /**
     * Wakes the waiters whose records are durable (all of them once the log failed), and one whose
     * record no running force covers, if a force may start (one parked until woken: a waiter
     * holding its force back for siblings wakes by itself when its delay is over); takes them off
     * the list. Called with the lock held.
     */
    void wake() {
        Waiter uncovered = null;
        for (Iterator<Waiter> it = parked.iterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (commit.failure() != null || commit.isDurable(waiter.lsn)) {
                it.remove();
                waiter.wake();
            } else if (uncovered == null && !waiter.holding && !commit.isClaimed(waiter.lsn)) {
                uncovered = waiter;
            }
        }
        if (uncovered != null && commit.mayStartForce()) {
            parked.remove(uncovered);
            uncovered.wake();
        }
    }

    /** A thread parked in {@link #awaitDurable}. */
    private static final class Waiter {
        final long lsn;
        final Thread thread;
        /** In the list; set and cleared under the lock, read without it by the waiter once woken. */
        volatile boolean listed;
        /** Parked for at most the commit delay (holding its force back), not until woken; guarded by the lock. */
        boolean holding;

        Waiter(long lsn, Thread thread) {
            this.lsn = lsn;
            this.thread = thread;
        }

        void wake() {
            listed = false;
            LockSupport.unpark(thread);
        }
    }
}
