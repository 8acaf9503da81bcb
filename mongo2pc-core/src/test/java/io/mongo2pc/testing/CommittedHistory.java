package io.mongo2pc.testing;

import io.mongo2pc.spi.CrashHook;
import io.mongo2pc.spi.CrashPoint;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What writers committed and what readers saw, to check that every committed read is explained by
 * the committed history: each read value equals the initial balance plus the effects of exactly the
 * transactions committed at one moment of the read. A transaction's commit point lies between the
 * crash points just before and just after its commit write ({@link #hook}, recorded by its owner's
 * thread), so at a moment {@code τ} the transactions whose window ended before {@code τ} are
 * committed, those whose window starts after it are not, and the few whose window holds {@code τ}
 * (at most one per writer thread) may be either: a read is explained if, for some {@code τ} within
 * the read, some subset of those few makes every value it read exact. Exact, and cheap: the moments
 * worth trying are the read's start and the ends of the windows within it. Thread-safe while
 * recording; {@link #unexplained} once recording is over.
 */
public final class CommittedHistory {
    /** How far before and after a read the commits its description lists may lie, in ns. */
    private static final long NEAR = 20_000_000L;
    private final long initial;
    private final Map<Object, long[]> windows = new ConcurrentHashMap<>();
    private final Queue<Transaction> committed = new ConcurrentLinkedQueue<>();
    private final Queue<Read> reads = new ConcurrentLinkedQueue<>();

    /** A committed transaction: its effect on each account and when its commit point can have been. */
    private record Transaction(Object id, long[] effect, long from, long to) { }

    private record Read(String what, int[] accounts, long[] values, long start, long end) { }

    public CommittedHistory(long initial) {
        this.initial = initial;
    }

    /** Records, by the owner's thread, when each transaction's commit write was sent and answered. */
    public CrashHook hook() {
        return (point, id) -> {
            if (point.step() == CrashPoint.Step.COMMIT) {
                long[] window = windows.computeIfAbsent(id, k -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
                synchronized (window) {
                    if (point.phase() == CrashPoint.Phase.BEFORE) {
                        window[0] = Math.min(window[0], System.nanoTime());
                    } else {
                        window[1] = Math.max(window[1], System.nanoTime());
                    }
                }
            }
        };
    }

    /** A transaction that committed, called between {@code start} and {@code end}, with {@code effect} on each account. */
    public void committed(Object id, long[] effect, long start, long end) {
        long[] window = windows.get(id);
        long from = start;
        long to = end;
        if (window != null) {
            synchronized (window) {
                from = window[0] == Long.MAX_VALUE ? start : Math.max(start, window[0]);
                to = window[1] == Long.MIN_VALUE ? end : Math.min(end, window[1]);
            }
        }
        committed.add(new Transaction(id, effect.clone(), from, to));
    }

    /** A committed read of {@code accounts}, which read {@code values}, called between {@code start} and {@code end}. */
    public void read(String what, int[] accounts, long[] values, long start, long end) {
        reads.add(new Read(what, accounts.clone(), values.clone(), start, end));
    }

    public int reads() {
        return reads.size();
    }

    public int committedCount() {
        return committed.size();
    }

    /** The reads no moment of the committed history explains (at most {@code max}), each described. */
    public List<String> unexplained(int max) {
        Transaction[] byEnd = committed.toArray(new Transaction[0]);
        Arrays.sort(byEnd, Comparator.comparingLong(Transaction::to));
        Transaction[] byStart = byEnd.clone();
        Arrays.sort(byStart, Comparator.comparingLong(Transaction::from));
        int accounts = byEnd.length == 0 ? 0 : byEnd[0].effect.length;
        long[][] prefix = new long[byEnd.length + 1][accounts];
        long[] ends = new long[byEnd.length];
        long[] starts = new long[byStart.length];
        long longest = 0;
        for (int k = 0; k < byEnd.length; k++) {
            ends[k] = byEnd[k].to;
            starts[k] = byStart[k].from;
            longest = Math.max(longest, byEnd[k].to - byEnd[k].from);
            for (int a = 0; a < accounts; a++) {
                prefix[k + 1][a] = prefix[k][a] + byEnd[k].effect[a];
            }
        }
        List<String> out = new ArrayList<>();
        for (Read read : reads) {
            if (out.size() >= max) {
                break;
            }
            if (!explained(read, byEnd, byStart, ends, starts, prefix, longest)) {
                out.add(describe(read, byEnd, ends, prefix));
            }
        }
        return out;
    }

    private boolean explained(Read read, Transaction[] byEnd, Transaction[] byStart, long[] ends, long[] starts,
                              long[][] prefix, long longest) {
        List<Long> moments = new ArrayList<>();
        moments.add(read.start);
        for (int k = firstAtOrAfter(ends, read.start); k < ends.length && ends[k] < read.end; k++) {
            moments.add(ends[k] + 1);
        }
        for (int k = firstAtOrAfter(starts, read.start); k < starts.length && starts[k] <= read.end; k++) {
            moments.add(starts[k]);
        }
        for (long tau : moments) {
            int k = firstAtOrAfter(ends, tau); // byEnd[0..k) committed before tau
            long[] residual = new long[read.accounts.length];
            for (int n = 0; n < read.accounts.length; n++) {
                residual[n] = read.values[n] - initial - prefix[k][read.accounts[n]];
            }
            List<long[]> open = new ArrayList<>();
            for (int j = firstAtOrAfter(starts, tau + 1) - 1; j >= 0 && byStart[j].from >= tau - longest; j--) {
                Transaction tx = byStart[j];
                if (tx.to >= tau && touches(tx, read.accounts)) {
                    long[] part = new long[read.accounts.length];
                    for (int n = 0; n < read.accounts.length; n++) {
                        part[n] = tx.effect[read.accounts[n]];
                    }
                    open.add(part);
                }
            }
            if (open.size() > 20) {
                throw new IllegalStateException(open.size() + " commit windows open at one moment: the check assumes a few");
            }
            if (subsetSums(open, residual)) {
                return true;
            }
        }
        return false;
    }

    private static boolean touches(Transaction tx, int[] accounts) {
        for (int a : accounts) {
            if (tx.effect[a] != 0) {
                return true;
            }
        }
        return false;
    }

    private static boolean subsetSums(List<long[]> parts, long[] target) {
        for (int mask = 0; mask < 1 << parts.size(); mask++) {
            long[] sum = new long[target.length];
            for (int j = 0; j < parts.size(); j++) {
                if ((mask & 1 << j) != 0) {
                    for (int n = 0; n < sum.length; n++) {
                        sum[n] += parts.get(j)[n];
                    }
                }
            }
            if (Arrays.equals(sum, target)) {
                return true;
            }
        }
        return false;
    }

    /** The first index whose value is at least {@code value} in the sorted {@code values}. */
    private static int firstAtOrAfter(long[] values, long value) {
        int lo = 0;
        int hi = values.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (values[mid] < value) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private String describe(Read read, Transaction[] byEnd, long[] ends, long[][] prefix) {
        StringBuilder b = new StringBuilder(read.what).append(" read");
        int before = firstAtOrAfter(ends, read.start);
        int after = firstAtOrAfter(ends, read.end);
        for (int n = 0; n < read.accounts.length; n++) {
            int a = read.accounts[n];
            b.append(" a").append(a).append('=').append(read.values[n]).append(" (committed ")
                    .append(initial + prefix[before][a]).append(" at its start, ").append(initial + prefix[after][a])
                    .append(" at its end)");
        }
        b.append("; ").append(after - before).append(" commits during it, ").append((read.end - read.start) / 1_000).append(" µs");
        // the commits near it, each with its window in µs from the read's start and its effect on what it read
        for (Transaction tx : byEnd) {
            if (tx.to >= read.start - NEAR && tx.from <= read.end + NEAR && touches(tx, read.accounts)) {
                b.append("\n  ").append(tx.id).append(" [").append((tx.from - read.start) / 1_000).append(", ")
                        .append((tx.to - read.start) / 1_000).append("] µs:");
                for (int a : read.accounts) {
                    if (tx.effect[a] != 0) {
                        b.append(" a").append(a).append(tx.effect[a] > 0 ? "+" : "").append(tx.effect[a]);
                    }
                }
            }
        }
        return b.toString();
    }
}
