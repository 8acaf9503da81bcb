package io.mongo2pc.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mongo2pc.RecoveryReport;
import io.mongo2pc.TransactionManager;
import io.mongo2pc.TransactionState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code recover}: one recovery pass over stale open transactions. */
@Command(name = "recover", mixinStandardHelpOptions = true,
        footer = {"--json prints {\"rolledForward\",\"canceled\",\"skipped\",\"failed\",\"notStale\",\"lateInsertsRemoved\",",
                "\"notStaleUntil\",\"recent\",\"queued\"}"},
        description = {"One pass over open transactions unchanged for --older-than (default: the lease): takes over",
                "each whose owner's own lease has run out and finishes it (pending and applied roll forward,",
                "canceling finishes its undo), and says why it left the others. Exit 0."})
final class RecoverCommand extends BaseCommand {
    @Option(names = "--older-than", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "only transactions unchanged for this long, by the server's clock (default: --lease)")
    Duration olderThan;

    @Option(names = "--target", paramLabel = "NAME=URI",
            description = "another MongoDB that operations of generic transactions reach (repeatable)")
    Map<String, String> targets = new LinkedHashMap<>();

    @Mixin
    JsonOption json;

    @Override
    protected int run() {
        Duration age = olderThan == null ? globals().lease() : olderThan;
        Pass pass;
        try (Session session = Session.open(globals(), targets)) {
            pass = Pass.run(session.manager(), age);
        }
        RecoveryReport report = pass.report();
        Waiting waiting = pass.waiting();
        long recent = pass.recent();
        long queued = pass.queued();
        if (json()) {
            printJson(pass.json());
            return ExitCodes.OK;
        }
        say("recovery: " + report.rolledForward() + " rolled forward, " + report.canceled() + " canceled, "
                + report.skipped() + " skipped" + (report.lateInsertsRemoved() == 0 ? ""
                : ", " + report.lateInsertsRemoved() + " documents left by late inserts removed"));
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
            say("  " + recent + " open not looked at: changed less than " + DurationConverter.format(age)
                    + " ago (--older-than" + (olderThan == null ? ", by default the lease" : "") + ")");
        }
        if (queued > 0) {
            say("  " + queued + " queued (initial): nobody started them; `mongo2pc worker` runs them");
        }
        if (report.finished() == 0 && report.skipped() == 0 && recent == 0 && queued == 0) {
            say("  nothing to recover: no transaction is open");
        }
        return ExitCodes.OK;
    }

    private static final int SHOWN = 10;

    /**
     * One pass and what it left: {@code recent} open ones it did not look at (changed more recently
     * than its age, or started, or taken over by another process, since the pass) and
     * {@code queued} ones nobody started.
     */
    record Pass(RecoveryReport report, Waiting waiting, long recent, long queued) {

        static Pass run(TransactionManager manager, Duration age) {
            RecoveryReport report = manager.recover(age);
            Map<TransactionState, Long> counts = manager.counts();
            long open = counts.getOrDefault(TransactionState.PENDING, 0L) + counts.getOrDefault(TransactionState.APPLIED, 0L)
                    + counts.getOrDefault(TransactionState.CANCELING, 0L);
            return new Pass(report, Waiting.of(manager, report.notStale()),
                    Math.max(0, open - report.notStale().size() - report.failed()),
                    counts.getOrDefault(TransactionState.INITIAL, 0L));
        }

        /** {@code {"rolledForward","canceled","skipped","failed","notStale","lateInsertsRemoved","notStaleUntil","recent","queued"}}. */
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
            return node;
        }
    }
}
