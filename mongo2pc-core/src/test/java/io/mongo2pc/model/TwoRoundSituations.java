package io.mongo2pc.model;

import io.mongo2pc.TransactionState;
import io.mongo2pc.model.TwoRoundState.Phase;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/** Situations each run of {@link TwoRoundModel} must reach, so that no invariant holds in vain. */
final class TwoRoundSituations {
    private TwoRoundSituations() { }

    /**
     * Situations a correct run must reach, so that the invariants are not checked in vain (the
     * suite asserts each was reached at least once).
     */
    static Map<String, Predicate<TwoRoundState>> of(TwoRoundModel m) {
        Map<String, Predicate<TwoRoundState>> watch = new LinkedHashMap<>();
        watch.put("owner finds its transaction tombstoned", s -> s.tomb[0] && Arrays.stream(s.procs)
                .anyMatch(p -> p.owner() && p.tx() == 0 && p.phase() == Phase.RESOLVER_UNDO));
        watch.put("tombstone with a hold still to undo", s -> s.tomb[0] && s.marker[0][0]);
        watch.put("document inserted after its deadline", s -> s.late[0]);
        watch.put("recovery re-prepares a pending transaction", s -> Arrays.stream(s.procs)
                .anyMatch(p -> p.owner() && p.phase() == Phase.PREPARE && p.ins() == TwoRoundState.NO_INSERT));
        watch.put("a credit rolled forward by another process before its owner's release ran", s -> Arrays.stream(s.procs)
                .anyMatch(p -> p.owner() && p.tx() == 0 && p.phase() == Phase.RELEASE && p.slot(1) == TwoRoundState.WIRE
                        && s.eff[0][1] == 1));
        if (m.exclusive) {
            watch.put("T1's update changed, not committed yet", s -> s.image != TwoRoundState.NO_IMAGE && s.doc[0] == TransactionState.PENDING);
            watch.put("T1's update committed, its lock not released yet", s -> s.committed[0] && s.marker[0][1]);
        }
        if (m.exclusive && m.txs == 2) {
            watch.put("T2's hold on A refused by T1's lock", s -> s.marker[0][1] && Arrays.stream(s.procs)
                    .anyMatch(p -> p.owner() && p.tx() == 1 && p.slot(0) == TwoRoundState.REFUSED));
            watch.put("T1's take of A refused by T2's hold", s -> s.marker[1][0] && Arrays.stream(s.procs)
                    .anyMatch(p -> p.owner() && p.tx() == 0 && p.slot(1) == TwoRoundState.REFUSED));
            watch.put("T2 committed before T1, T1 committed after", s -> s.firstCommitted == 1 && s.committed[0]);
            watch.put("T1 committed before T2, T2 committed after", s -> s.firstCommitted == 0 && s.committed[1]);
        }
        if (m.commitInsert) {
            watch.put("a commit insert ran after its deadline (counts as canceled)", s -> s.doc[0] == TransactionState.APPLIED && s.late[0]);
            watch.put("a late commit insert after T1's tombstone was pruned", s -> s.doc[0] == TransactionState.APPLIED && s.late[0]
                    && s.pruned[0] && s.canceled[0] && !s.committed[0]);
            watch.put("an owner undoing after reading back its late commit insert", s -> s.doc[0] == TransactionState.APPLIED
                    && s.late[0] && Arrays.stream(s.procs).anyMatch(p -> p.owner() && p.tx() == 0 && p.phase() == Phase.RESOLVER_UNDO));
            watch.put("a late commit insert repaired to canceled", s -> s.doc[0] == TransactionState.CANCELED && s.late[0]);
            watch.put("an owner told committed (commit insert)", s -> (s.told[0] & TwoRoundState.TOLD_COMMITTED) != 0
                    && s.doc[0] == TransactionState.APPLIED && s.epoch[0] == 1);
            watch.put("T1 canceled by its owner without a document", s -> s.doc[0] == TransactionState.CANCELED && !s.tomb[0]
                    && !s.late[0] && Arrays.stream(s.procs).anyMatch(p -> p.owner() && p.tx() == 0 && p.phase() == Phase.RESOLVER_UNDO));
            watch.put("the pending document inserted after a prepare in doubt", s -> s.doc[0] == TransactionState.PENDING);
            watch.put("a terminal document pruned with entries left", s -> s.pruned[0] && s.doc[0] == null && s.anyMarker(0));
        }
        if (m.reader) {
            watch.put("a reader found no document for a committed transaction whose marker it read", s -> s.read != null
                    && s.read.found(0) == TwoRoundReader.NO_DOCUMENT && s.committed[0]);
            watch.put("a reader found a late copy's document of a committed transaction whose marker it read", s -> s.read != null
                    && s.read.found(0) == TwoRoundReader.NOT_COMMITTED && s.committed[0]);
        }
        if (m.reader && m.txs == 2) {
            watch.put("a reader read again a transaction not found committed while another was", s -> s.read != null
                    && s.read.rechecked() != 0);
        }
        if (m.txs == 2) {
            watch.put("T2 committed", s -> s.committed[1]);
            watch.put("T2 canceled", s -> s.canceled[1]);
            watch.put("T2 committed before T1's owner released T1's credit", s -> s.committed[1] && Arrays.stream(s.procs)
                    .anyMatch(p -> p.owner() && p.tx() == 0 && p.phase() == Phase.RELEASE && p.slot(1) != TwoRoundState.DONE));
        }
        return watch;
    }
}
