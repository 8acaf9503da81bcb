package io.mongo2pc.model;

import io.mongo2pc.model.TwoRoundState.Msg;
import io.mongo2pc.model.TwoRoundState.Proc;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Symmetry reduction for {@link TwoRoundModel}: processes run the same program, so once none has a
 * transaction of its own left to start, two states that differ only in how the processes are
 * numbered behave the same. Each state is renamed to the numbering that sorts the processes by
 * what they are (their own state, the documents naming them as owner, the writes whose answer
 * they wait for). Renaming keeps every relation between a process, its writes and the documents
 * it owns, so it changes no verdict; a trace's process numbers may then swap between two steps.
 */
final class TwoRoundSymmetry {
    private TwoRoundSymmetry() { }

    static TwoRoundState canonical(TwoRoundState s) {
        int n = s.procs.length;
        for (Proc p : s.procs) {
            if (p.start() >= 0) {
                return s;
            }
        }
        String[] signature = new String[n];
        for (int p = 0; p < n; p++) {
            StringBuilder b = new StringBuilder();
            renamed(s.procs[p], 0).appendCode(b);
            for (int t = 0; t < s.owner.length; t++) {
                b.append(s.owner[t] == p ? 'o' : '-');
            }
            List<Long> waits = new ArrayList<>();
            for (Msg w : s.wire) {
                if (w.proc() == p) {
                    waits.add(w.withProc(0).code());
                }
            }
            waits.sort(null);
            b.append(waits);
            signature[p] = b.toString();
        }
        Integer[] order = new Integer[n];
        for (int p = 0; p < n; p++) {
            order[p] = p;
        }
        Arrays.sort(order, Comparator.comparing(p -> signature[p]));
        int[] to = new int[n];
        boolean identity = true;
        for (int k = 0; k < n; k++) {
            to[order[k]] = k;
            identity &= order[k] == k;
        }
        if (identity) {
            return s;
        }
        Proc[] procs = new Proc[n];
        for (int p = 0; p < n; p++) {
            procs[to[p]] = renamed(s.procs[p], to[p]);
        }
        s.procs = procs;
        for (int t = 0; t < s.owner.length; t++) {
            if (s.owner[t] >= 0 && s.owner[t] < n) {
                s.owner[t] = to[s.owner[t]];
            }
        }
        s.wire.replaceAll(w -> w.proc() >= 0 ? w.withProc(to[w.proc()]) : w);
        s.wire.sort(null);
        return s;
    }

    /** The process with the writes it holds (its move, its takeover read) addressed to {@code p}. */
    private static Proc renamed(Proc c, int p) {
        Proc r = c;
        if (r.move() != null) {
            r = r.withMove(r.move().withProc(p), r.moveDoubt());
        }
        if (r.hand() != null) {
            r = r.withHand(r.hand().withProc(p));
        }
        return r;
    }
}
