package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code recover}: one recovery pass over stale open transactions, and what became of each marker. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"rolledForward\",\"canceled\",\"skipped\",\"failed\",\"notStale\",\"lateInsertsRemoved\",",
                "\"notStaleUntil\",\"recent\",\"queued\",\"lateInserts\",\"markerList\",\"server\",\"data\"}: lateInserts",
                "[{\"target\",\"db\",\"coll\",\"id\",\"transaction\"}] the documents late copies of inserts left that it",
                "removed; markerList [{\"account\",\"transaction\",\"state\",\"removed\"}] each marker on accounts",
                "before the pass, with its transaction's state after it and whether the marker is gone"},
        description = {"One pass over open transactions: takes over each whose owner's lease has run out, by the server's",
                "clock, and finishes it (pending and applied roll forward, canceling finishes its undo); removes what late",
                "copies of inserts left; says why it left the others and what became of each marker on accounts.",
                "Exit 0."})
final class RecoverCommand extends BaseCommand {
    @Option(names = "--older-than", paramLabel = "DURATION", converter = DurationConverter.class,
            description = {"also leave transactions changed within DURATION, by the server's clock (default: none,",
                    "each is finished as soon as its owner's lease has run out; one stored without a lease of its own",
                    "waits for --lease)"})
    Duration olderThan;

    @Option(names = "--target", paramLabel = "NAME=URI",
            description = "another MongoDB that operations of generic transactions reach (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Pass pass;
        try (Session session = open(targets)) {
            pass = Pass.run(session, olderThan);
        }
        RecoveryReport report = pass.report();
        Waiting waiting = pass.waiting();
        long recent = pass.recent();
        long queued = pass.queued();
        if (json()) {
            printJson(where(pass.json()));
            return ExitCodes.OK;
        }
        say("recovery: " + report.rolledForward() + " rolled forward, " + report.canceled() + " canceled, "
                + report.skipped() + " skipped" + (report.lateInsertsRemoved() == 0 ? ""
                : ", " + report.lateInsertsRemoved() + " documents left by late inserts removed"));
        report.lateInserts().forEach(late -> say("  removed " + late.document() + ": left by a late copy of the insert of"
                + " transaction " + TransactionIds.printable(late.transactionId()) + " (never written: not in effect)"));
        if (waiting != null) {
            say("  " + waiting.describe() + "; recovery takes a transaction over only once its owner's lease has run out");
            report.notStale().stream().limit(SHOWN).forEach(w ->
                    say("    " + TransactionIds.printable(w.id()) + ": lease runs out at " + w.leaseEnds()));
            if (report.notStale().size() > SHOWN) {
                say("    ... and " + (report.notStale().size() - SHOWN) + " more");
            }
        }
        if (report.failed() > 0) {
            say("  " + report.failed() + " failed (a target down, or operations it cannot read; the messages above say"
                    + " why): the next pass tries them again");
        }
        if (recent > 0) {
            say("  " + recent + " open not looked at: " + (olderThan == null
                    ? "started or changed while the pass ran, or beyond the 500 a pass looks at"
                    : "changed less than " + DurationConverter.format(olderThan) + " ago (--older-than)"));
        }
        if (queued > 0) {
            say("  " + queued + " queued (initial): nobody started them; `mongo2pc worker` runs them");
        }
        if (report.finished() == 0 && report.skipped() == 0 && recent == 0 && queued == 0) {
            say("  nothing to recover: no transaction is open");
        }
        List<String> markers = pass.markers().describe(report);
        say("markers on accounts: " + pass.markers().markers().size() + " before the pass, " + pass.markers().left().size()
                + " after it");
        markers.stream().limit(SHOWN_MARKERS).forEach(line -> say("  " + line));
        if (markers.size() > SHOWN_MARKERS) {
            say("  ... and " + (markers.size() - SHOWN_MARKERS) + " more (`mongo2pc recover --json` lists every one)");
        }
        return ExitCodes.OK;
    }

    private static final int SHOWN = 10;
    private static final int SHOWN_MARKERS = 50;

    /**
     * One pass and what it left: {@code recent} open ones it did not look at (changed more recently
     * than its age, or started, or taken over by another process, since the pass), {@code queued}
     * ones nobody started, and what became of the markers on accounts.
     */
    record Pass(RecoveryReport report, Waiting waiting, long recent, long queued, MarkerRows.Pass markers) {

        /** One pass over what is unchanged for {@code olderThan} (null: each once its owner's lease has run out). */
        static Pass run(Session session, Duration olderThan) {
            TransactionManager manager = session.manager();
            List<MarkerRows.Row> before = MarkerRows.read(session);
            RecoveryReport report = olderThan == null ? manager.recover() : manager.recover(olderThan);
            MarkerRows.Pass markers = MarkerRows.Pass.after(session, before);
            Map<TransactionState, Long> counts = manager.counts();
            long open = counts.getOrDefault(TransactionState.PENDING, 0L) + counts.getOrDefault(TransactionState.APPLIED, 0L)
                    + counts.getOrDefault(TransactionState.CANCELING, 0L);
            return new Pass(report, Waiting.of(manager, report.notStale()),
                    Math.max(0, open - report.notStale().size() - report.failed()),
                    counts.getOrDefault(TransactionState.INITIAL, 0L), markers);
        }

        /**
         * {@code {"rolledForward","canceled","skipped","failed","notStale","lateInsertsRemoved","notStaleUntil","recent",
         * "queued","lateInserts","markerList"}}.
         */
        ObjectNode json() {
            ObjectNode node = Json.object();
            node.put("rolledForward", report.rolledForward());
            node.put("canceled", report.canceled());
            node.put("skipped", report.skipped());
            node.put("failed", report.failed());
            node.put("notStale", report.notStale().size());
            node.put("lateInsertsRemoved", report.lateInsertsRemoved());
            node.put("notStaleUntil", waiting == null ? null : waiting.until().toString());
            node.put("recent", recent);
            node.put("queued", queued);
            ArrayNode late = node.putArray("lateInserts");
            for (RecoveryReport.LateInsert removed : report.lateInserts()) {
                ObjectNode item = late.addObject();
                item.put("target", removed.document().target());
                item.put("db", removed.document().database());
                item.put("coll", removed.document().collection());
                item.set("id", Json.value(removed.document().id()));
                item.set("transaction", Json.value(TransactionIds.printable(removed.transactionId())));
            }
            node.set("markerList", markers.json());
            return node;
        }
    }
}
